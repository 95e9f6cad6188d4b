#!/usr/bin/python3
"""`ccbench replay --percentiles` under a real mpirun (2 ranks, the hand-made two-rank trace): one
step a sample, every call site's row and the step's row carry percentiles_us equal to NumPy's and
SciPy's on the row's own samples, the table has a column pair per level, `compare --statistic pNN`
on two replays reduces each row's trials to that percentile, and bad levels or too few --steps exit 2
with one line naming the flags (no file written)."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

import jsonschema
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
from percentile_rows import check_row, time_text  # noqa: E402

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = os.environ.get("CCBENCH_SOURCE", ".")
TWO = os.path.join(SOURCE, "tests", "data", "replay", "two_ranks.trace.json")
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
LEVELS = [50, 90, 97.5]  # 60 steps: p50 and p90 have 95% intervals, p97.5 (146 samples) only a value
STEPS = 60


def env():
    e = dict(os.environ)
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return e


def replay(args, timeout=60):
    return subprocess.run(MPIRUN + ["-np", "2", CCBENCH, "replay", TWO] + args, capture_output=True, text=True,
                          timeout=timeout, env=env())


def load(path):
    with open(path) as f:
        return json.load(f)


class ReplayPercentiles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory(prefix="ccbench_replay_percentiles_")
        cls.files, cls.procs = [], []
        for name in ("a", "b"):
            out = os.path.join(cls.dir.name, f"{name}.json")
            cls.procs.append(replay(["--steps", str(STEPS), "--trials", "2", "--gaps", "none", "--percentiles",
                                     "97.5,50,90", "-J", out]))
            cls.files.append(out)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_every_row_holds_numpy_percentiles_and_binomial_intervals(self):
        with open(os.path.join(SOURCE, "configs", "schema", "result.schema.json")) as f:
            schema = json.load(f)
        for proc, path in zip(self.procs, self.files):
            self.assertEqual(proc.returncode, 0, proc.stderr)
            doc = load(path)
            jsonschema.validate(doc, schema)
            self.assertEqual(doc["config"]["percentiles"], LEVELS)
            self.assertEqual(doc["config"]["timing"]["batch_rule"], "--percentiles: one step a sample (per-step times)")
            kinds = [r["replay"]["kind"] for r in doc["results"]]
            self.assertIn("step", kinds)
            self.assertIn("call_site", kinds)
            for row in doc["results"]:
                self.assertEqual(len(row["samples_us"]), STEPS)
                check_row(self, row, LEVELS)
                self.assertIsNotNone(row["percentiles_us"]["p90"]["ci95"])
                self.assertIsNone(row["percentiles_us"]["p97.5"]["ci95"])

    def test_table_has_a_column_pair_per_level(self):
        proc = self.procs[0]
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        header = [l for l in lines if l.startswith("#") and "of step" in l]
        self.assertEqual(len(header), 1, proc.stdout)
        self.assertEqual(header[0].split()[-6:], ["p50", "ci", "p90", "ci", "p97.5", "ci"])
        rows = load(self.files[0])["results"]
        printed = [l.split() for l in lines if not l.startswith("#") and l.strip()]
        self.assertEqual(len(printed), len(rows))
        for cells, row in zip(printed, rows):
            levels = row["percentiles_us"]
            self.assertEqual(cells[-6], time_text(levels["p50"]["value"]))
            self.assertEqual(cells[-4], time_text(levels["p90"]["value"]))
            self.assertEqual(cells[-2], time_text(levels["p97.5"]["value"]))
            self.assertEqual(cells[-1], "-")  # no interval for p97.5

    def test_renderers_carry_every_row_and_level(self):
        self.assertEqual(self.procs[0].returncode, 0, self.procs[0].stderr)
        rows = load(self.files[0])["results"]

        def report(fmt):
            p = subprocess.run([CCBENCH, "report", self.files[0], "--format", fmt], capture_output=True, text=True,
                               timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            return p.stdout

        table = list(csv.DictReader(io.StringIO(report("csv"))))
        self.assertEqual(len(table), len(rows))
        for line, row in zip(table, rows):
            for key in ("p50", "p90", "p97.5"):
                self.assertEqual(float(line[f"{key}_us"]), row["percentiles_us"][key]["value"])
            self.assertEqual([float(line["p90_ci95_lo_us"]), float(line["p90_ci95_hi_us"])],
                             row["percentiles_us"]["p90"]["ci95"])
        md = report("markdown").splitlines()
        start = [i for i, l in enumerate(md) if l.startswith("### Percentiles of per-iteration times")]
        self.assertEqual(len(start), 1, md)
        self.assertEqual(len([l for l in md[start[0] + 4:] if l.startswith("|") and "replay_step" in l]),
                         len([r for r in rows if r["op"] == "replay_step"]))

    def test_compare_reduces_each_trial_to_the_percentile(self):
        for proc in self.procs:
            self.assertEqual(proc.returncode, 0, proc.stderr)
        p = subprocess.run([CCBENCH, "compare", *self.files, "--statistic", "p90", "--metric", "time", "--format",
                            "json"], capture_output=True, text=True, timeout=60)
        self.assertIn(p.returncode, (0, 1, 4), p.stderr)
        verdict = json.loads(p.stdout)
        self.assertEqual(verdict["summary"]["row_statistic"], "p90")
        docs = [load(f)["results"] for f in self.files]
        self.assertEqual(len(verdict["rows"]), len({(r["op"], r["bytes"]) for r in docs[0]}))
        ops = set()
        for row in verdict["rows"]:
            ops.add(row["op"])
            for side, results in zip(("baseline", "candidate"), docs):
                pooled = [v for r in results if (r["op"], r["bytes"]) == (row["op"], row["bytes"])
                          for v in r["samples_us"]]
                self.assertEqual(row[side]["samples"], len(pooled))
                self.assertAlmostEqual(row[side]["median_us"], float(np.percentile(pooled, 90)),
                                       delta=1e-9 * max(pooled))
        self.assertIn("replay_step", ops)

    def test_bad_levels_and_too_few_steps_exit_2_naming_the_flags(self):
        cases = [
            (["--percentiles", "0"], "--percentiles"),
            (["--percentiles", "100"], "--percentiles"),
            (["--percentiles", "abc"], "--percentiles"),
            (["--percentiles", "99", "--steps", "60"], "--steps 60"),
        ]
        for args, names in cases:
            with self.subTest(args=args):
                out = os.path.join(self.dir.name, "refused.json")
                p = replay(["--gaps", "none", "-J", out] + args)
                self.assertEqual(p.returncode, 2, p.stderr)
                lines = [l for l in p.stderr.splitlines() if "--percentiles" in l]
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn(names, lines[0])
                self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
