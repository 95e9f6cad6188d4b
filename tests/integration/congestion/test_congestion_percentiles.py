#!/usr/bin/python3
"""`ccbench congestion --percentiles` under a real mpirun (4 ranks as 2 hosts of 2, the alltoall
congestor): the measured tests' rows of both phases carry percentiles_us equal to NumPy's and SciPy's
on the row's own per-op samples, `report` shows the levels, `compare --statistic p99` of the isolated
and the congested file reduces each trial to its p99, and a level needing more samples than -n gives
or a --batch exits 2 naming the flags."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import jsonschema
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
from percentile_rows import check_row  # noqa: E402

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = os.environ.get("CCBENCH_SOURCE", ".")
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
LEVELS = [50, 95, 99]  # 120 samples: p50 and p95 have 95% intervals, p99 (368) only a value
LAYOUT = ["--ranks-per-host", "2", "--measured-ranks", "0,1", "--congestors", "alltoall", "--bw-bytes", "4K",
          "--congestor-bytes", "64K", "-w", "1"]


def env():
    e = dict(os.environ)
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return e


def congestion(args, timeout=120):
    return subprocess.run(MPIRUN + ["-np", "4", CCBENCH, "congestion"] + LAYOUT + args, capture_output=True,
                          text=True, timeout=timeout, env=env())


def load(path):
    with open(path) as f:
        return json.load(f)


class CongestionPercentiles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory(prefix="ccbench_congestion_percentiles_")
        cls.proc = congestion(["--trials", "2", "-n", "120", "--percentiles", "99,50,95", "-J",
                               os.path.join(cls.dir.name, "c.json")])
        cls.phases = {phase: os.path.join(cls.dir.name, f"c.alltoall.{phase}.json")
                      for phase in ("isolated", "congested")}

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_measured_rows_hold_numpy_percentiles_and_binomial_intervals(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout + self.proc.stderr)
        with open(os.path.join(SOURCE, "configs", "schema", "result.schema.json")) as f:
            schema = json.load(f)
        for phase, path in self.phases.items():
            doc = load(path)
            jsonschema.validate(doc, schema)
            self.assertEqual(doc["config"]["percentiles"], LEVELS)
            self.assertEqual(sorted((r["trial"], r["op"], r["bytes"]) for r in doc["results"]),
                             sorted((t, op, b) for t in (0, 1) for op, b in
                                    [("allreduce", 8), ("allreduce", 4096), ("alltoall", 4096)]))
            for row in doc["results"]:
                self.assertEqual(row["congestion"]["phase"], phase)
                self.assertEqual(row["batch"], 1)
                self.assertEqual(len(row["samples_us"]), 120)
                check_row(self, row, LEVELS)
                self.assertIsNotNone(row["percentiles_us"]["p95"]["ci95"])
                self.assertIsNone(row["percentiles_us"]["p99"]["ci95"])

    def test_report_and_compare_read_the_levels(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout + self.proc.stderr)
        iso, con = self.phases["isolated"], self.phases["congested"]
        table = subprocess.run([CCBENCH, "report", iso, "--format", "table"], capture_output=True, text=True,
                               timeout=60)
        self.assertEqual(table.returncode, 0, table.stderr)
        header = [l for l in table.stdout.splitlines() if l.startswith("#") and "p95" in l]
        self.assertTrue(header, table.stdout)
        self.assertEqual(header[0].split()[-6:], ["p50", "ci", "p95", "ci", "p99", "ci"])
        p = subprocess.run([CCBENCH, "compare", iso, con, "--statistic", "p99", "--metric", "time", "--format",
                            "json"], capture_output=True, text=True, timeout=60)
        self.assertIn(p.returncode, (0, 1, 4), p.stderr)
        verdict = json.loads(p.stdout)
        self.assertEqual(verdict["summary"]["row_statistic"], "p99")
        self.assertEqual(len(verdict["rows"]), 3)
        for row in verdict["rows"]:
            for side, path in (("baseline", iso), ("candidate", con)):
                pooled = [v for r in load(path)["results"] if (r["op"], r["bytes"]) == (row["op"], row["bytes"])
                          for v in r["samples_us"]]
                self.assertEqual(row[side]["samples"], 240)
                self.assertAlmostEqual(row[side]["median_us"], float(np.percentile(pooled, 99)),
                                       delta=1e-9 * max(pooled))

    def test_too_few_samples_and_batches_exit_2_naming_the_flags(self):
        for args, names in [(["--percentiles", "99", "-n", "50"], "-n/--iters 50"),
                            (["--percentiles", "99", "--batch", "4"], "--batch 4"),
                            (["--percentiles", "100"], "--percentiles")]:
            with self.subTest(args=args):
                out = os.path.join(self.dir.name, "refused.json")
                p = congestion(["--trials", "1", "-J", out] + args, timeout=60)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                lines = [l for l in p.stderr.splitlines() if "--percentiles" in l]
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn(names, lines[0])
                self.assertFalse(os.path.exists(os.path.join(self.dir.name, "refused.alltoall.isolated.json")))


if __name__ == "__main__":
    unittest.main()
