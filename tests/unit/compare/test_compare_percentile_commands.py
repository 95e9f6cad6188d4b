#!/usr/bin/python3
"""`ccbench compare --statistic p99` on hand-made `ccbench replay` and `ccbench congestion` result
files (the rows those commands write with --percentiles: a replay's call-site rows and its step row;
a congestion phase file's measured tests) with a known answer: the same median, a tail twice as slow,
so the median gate passes and the p99 gate fails on every row; each side's per-row p99 is NumPy's on
the pooled samples.

Usage: test_compare_percentile_commands.py PATH_TO_ccbench
"""
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_results as gen  # noqa: E402
from test_compare_percentile import SAMPLES, with_tail  # noqa: E402

CCBENCH = None
TRACE_SHA256 = "5" * 64


def run(*args):
    p = subprocess.run([CCBENCH, *map(str, args)], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def replay_file(seed):
    """A replay of one call site (an allreduce) and its step row, as ccbench replay writes them."""
    doc = gen.make_file(seed=seed, ops=("allreduce",), sizes=[1 << 18], samples=SAMPLES, trials=1, sigma=0.01,
                        trial_sigma=0.003)
    site = doc["results"][0]
    site["replay"] = {"kind": "call_site", "site": 0, "group": "world", "calls": 1, "fraction_of_step": 1.0}
    step = json.loads(json.dumps(site))
    step.update(op="replay_step", dtype="none", redop="none", busbw_gbps=0.0, algbw_gbps=0.0)
    step["replay"] = {"kind": "step", "calls": 1, "sites": 1, "steps": SAMPLES}
    doc["results"].append(step)
    doc["run"]["command"] = ["ccbench replay", "job.trace.json"]
    doc["config"]["replay"] = {"trace": "job.trace.json", "trace_sha256": TRACE_SHA256, "steps": SAMPLES}
    return doc


def congestion_file(seed, phase):
    """One phase file of the alltoall pattern: the measured allreduce and alltoall."""
    doc = gen.make_file(seed=seed, ops=("allreduce", "alltoall"), sizes=[1 << 12], samples=SAMPLES, trials=1,
                        sigma=0.01, trial_sigma=0.003)
    for row in doc["results"]:
        row["congestion"] = {"phase": phase, "pattern": "alltoall"}
    doc["run"]["command"] = ["ccbench congestion"]
    doc["config"]["congestion"] = {"pattern": "alltoall", "phase": phase}
    return doc


class ComparePercentileOfCommands(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="ccbench-compare-p99-commands-"))
        for i in range(6):
            gen.write(cls.tmp / "replay_base" / f"launch-{i:03d}.json", with_tail(replay_file(100 + i), 2, i))
            gen.write(cls.tmp / "replay_slow" / f"launch-{i:03d}.json", with_tail(replay_file(200 + i), 4, 10 + i))
            gen.write(cls.tmp / "isolated" / f"launch-{i:03d}.json",
                      with_tail(congestion_file(300 + i, "isolated"), 2, 20 + i))
            gen.write(cls.tmp / "congested" / f"launch-{i:03d}.json",
                      with_tail(congestion_file(400 + i, "congested"), 4, 30 + i))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check(self, base, cand, ops):
        code, out, err = run("compare", base, cand, "--gate", "regression", "--metric", "time")
        self.assertEqual(code, 0, out + err)  # the medians are the same
        code, out, err = run("compare", base, cand, "--gate", "regression", "--metric", "time", "--statistic", "p99",
                             "--format", "json")
        self.assertEqual(code, 1, out + err)
        verdict = json.loads(out)
        self.assertEqual(verdict["verdict"], "regression")
        self.assertEqual(len(verdict["gate"]["failures"]), len(ops) + 1)  # every row and the geomean
        self.assertEqual(verdict["summary"]["row_statistic"], "p99")
        self.assertEqual(sorted(r["op"] for r in verdict["rows"]), sorted(ops))
        for row in verdict["rows"]:
            self.assertTrue(row["regression"], row)
            for side, folder in (("baseline", base), ("candidate", cand)):
                pooled = [v for f in sorted(folder.iterdir()) for r in json.loads(f.read_text())["results"]
                          if r["op"] == row["op"] for v in r["samples_us"]]
                self.assertEqual(row[side]["samples"], 6 * SAMPLES)
                self.assertAlmostEqual(row[side]["median_us"], float(np.percentile(pooled, 99)), delta=1e-9)

    def test_replay_step_and_call_site_gate_on_the_p99(self):
        self.check(self.tmp / "replay_base", self.tmp / "replay_slow", ["allreduce", "replay_step"])

    def test_congestion_phases_gate_on_the_p99(self):
        self.check(self.tmp / "isolated", self.tmp / "congested", ["allreduce", "alltoall"])


if __name__ == "__main__":
    CCBENCH = sys.argv.pop(1)
    unittest.main()
