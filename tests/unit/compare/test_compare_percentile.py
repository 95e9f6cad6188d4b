#!/usr/bin/python3
"""`ccbench compare --statistic p99`: gate and claim verdicts on the rows' p99 on hand-made files
with a known answer (same median, a tail twice as slow or twice as fast), the per-size p99 against
NumPy on the pooled samples, and exit 2 naming the file and row when a row has no p99.

Usage: test_compare_percentile.py PATH_TO_ccbench
"""
import json
import random
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_results as gen  # noqa: E402

CCBENCH = None
SAMPLES = 400
TAIL = 12  # 3% of the samples: the p99 lies inside the tail


def run(*args):
    p = subprocess.run([CCBENCH, *map(str, args)], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def with_tail(doc, tail_factor, seed, percentiles=True):
    """Each row's top TAIL samples become tail_factor times its median (with 1% noise), so the
    median stays and the p99 is about tail_factor x the median; percentiles_us as run writes it."""
    rng = random.Random(seed)
    for row in doc["results"]:
        s = sorted(row["samples_us"])
        med = float(np.median(s))
        s[-TAIL:] = [med * tail_factor * (1 + 0.01 * rng.random()) for _ in range(TAIL)]
        rng.shuffle(s)
        row["samples_us"] = s
        row["time_us"]["median"] = float(np.median(s))
        if percentiles:
            row["percentiles_us"] = {
                "p50": {"value": float(np.percentile(s, 50)), "ci95": None, "ci_absent": "not needed here"},
                "p99": {"value": float(np.percentile(s, 99)), "ci95": None, "ci_absent": "not needed here"}}
    return doc


class ComparePercentile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="ccbench-compare-p99-"))
        one = dict(ops=("allreduce",), sizes=[1 << 18], samples=SAMPLES, trials=1, sigma=0.01, trial_sigma=0.003)
        for i in range(6):
            gen.write(cls.tmp / "base" / f"launch-{i:03d}.json", with_tail(gen.make_file(seed=100 + i, **one), 2, i))
            gen.write(cls.tmp / "slow_tail" / f"launch-{i:03d}.json",
                      with_tail(gen.make_file(seed=200 + i, **one), 4, 10 + i))
            gen.write(cls.tmp / "fast_tail" / f"launch-{i:03d}.json",
                      with_tail(gen.make_file(seed=300 + i, **one), 1.0001, 20 + i))
            gen.write(cls.tmp / "no_p99" / f"launch-{i:03d}.json",
                      with_tail(gen.make_file(seed=400 + i, **one), 2, 30 + i, percentiles=False))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_gate_on_the_median_passes_on_the_p99_fails(self):
        base, cand = self.tmp / "base", self.tmp / "slow_tail"
        code, out, err = run("compare", base, cand, "--gate", "regression")
        self.assertEqual(code, 0, out + err)
        code, out, err = run("compare", base, cand, "--gate", "regression", "--statistic", "p99")
        self.assertEqual(code, 1, out + err)
        self.assertIn("p99 of per-iteration times", out)

    def test_claim_on_the_p99(self):
        # The candidate's tail is at its median: p99 about half the baseline's (time ratio 2, speedup 100%).
        base, cand = self.tmp / "base", self.tmp / "fast_tail"
        args = ["--expect-speedup", "100%", "--tolerance", "15%", "--metric", "time"]
        code, out, err = run("compare", base, cand, *args, "--statistic", "p99")
        self.assertEqual(code, 0, out + err)
        code, out, err = run("compare", base, cand, *args)  # the medians are the same: refuted
        self.assertEqual(code, 1, out + err)

    def test_per_size_numbers_are_the_pooled_p99(self):
        base, cand = self.tmp / "base", self.tmp / "slow_tail"
        code, out, err = run("compare", base, cand, "--statistic", "p99", "--metric", "time", "--format", "json")
        self.assertEqual(code, 0, err)
        verdict = json.loads(out)
        self.assertEqual(verdict["summary"]["row_statistic"], "p99")
        self.assertEqual(verdict["summary"]["statistic"], "geomean")
        row = verdict["rows"][0]
        for side, folder in [("baseline", base), ("candidate", cand)]:
            pooled = [v for f in sorted(folder.iterdir()) for v in json.loads(f.read_text())["results"][0]["samples_us"]]
            self.assertEqual(row[side]["samples"], len(pooled))
            self.assertAlmostEqual(row[side]["median_us"], float(np.percentile(pooled, 99)), delta=1e-9)
            s = np.sort(pooled)
            # 2400 samples: the p99 interval exists; its ends are order statistics of the pool.
            self.assertIn(row[side]["ci95_us"][0], s)
            self.assertIn(row[side]["ci95_us"][1], s)
        code, out, err = run("compare", base, cand, "--metric", "time", "--format", "json")
        self.assertNotIn("row_statistic", json.loads(out)["summary"])

    def test_rows_without_the_percentile_exit_2_naming_file_and_row(self):
        code, out, err = run("compare", self.tmp / "base", self.tmp / "no_p99", "--statistic", "p99")
        self.assertEqual(code, 2, out + err)
        self.assertIn("launch-000.json", err)
        self.assertIn("/results/0", err)
        self.assertIn("percentiles_us.p99", err)
        code, out, err = run("compare", self.tmp / "base", self.tmp / "base", "--statistic", "p99.9")
        self.assertEqual(code, 2, out + err)
        self.assertIn("p99.9", err)
        for bad in ["p100", "p0", "pabc", "p"]:
            code, out, err = run("compare", self.tmp / "base", self.tmp / "base", "--statistic", bad)
            self.assertEqual(code, 2, f"{bad}: {out}{err}")
            self.assertIn("--statistic", err)


if __name__ == "__main__":
    CCBENCH = sys.argv.pop(1)
    unittest.main()
