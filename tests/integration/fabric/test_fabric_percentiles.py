#!/usr/bin/python3
"""`ccbench fabric --percentiles` under a real mpirun (2 ranks, libfabric's shm): one iteration a
sample (a round trip halved for pingpong, a window's time over --window for bw), every row's
percentiles_us equal to NumPy's and SciPy's on its own samples, the table's column pair per level,
and a level needing more samples than -n gives or a --batch exits 2 naming the flags."""
import os
import shutil
import unittest

import fabric_mpi as m
from percentile_rows import check_row, time_text

LEVELS = [50, 95, 99]  # 120 samples: p50 and p95 have 95% intervals, p99 (368) only a value


class FabricPercentiles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = m.tmpdir()
        cls.out = os.path.join(cls.dir, "f.json")
        cls.proc = m.run(["-p", "shm", "--ops", "pingpong,bw", "--window", "4", "-b", "8", "-e", "64", "-f", "8",
                          "-n", "120", "-w", "2", "--percentiles", "99,50,95", "-J", cls.out])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_rows_hold_numpy_percentiles_and_binomial_intervals(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        doc = m.load(self.out)
        m.validate(doc)
        self.assertEqual(doc["config"]["percentiles"], LEVELS)
        self.assertEqual(sorted((r["op"], r["bytes"]) for r in doc["results"]),
                         [("fabric_bw", 8), ("fabric_bw", 64), ("fabric_pingpong", 8), ("fabric_pingpong", 64)])
        for row in doc["results"]:
            self.assertEqual(row["batch"], 1)
            self.assertEqual(len(row["samples_us"]), 120)
            check_row(self, row, LEVELS)
            self.assertIsNone(row["percentiles_us"]["p99"]["ci95"])

    def test_table_has_a_column_pair_per_level(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        lines = self.proc.stdout.splitlines()
        headers = [l for l in lines if l.startswith("#") and "msg rate" in l]
        self.assertEqual(len(headers), 2, self.proc.stdout)  # one per op
        for h in headers:
            self.assertEqual(h.split()[-6:], ["p50", "ci", "p95", "ci", "p99", "ci"])
        printed = [l.split() for l in lines if l.strip() and not l.startswith("#") and l.split()[0] in ("8", "64")]
        rows = m.load(self.out)["results"]
        self.assertEqual(len(printed), len(rows))
        for cells, row in zip(printed, rows):
            self.assertEqual(cells[0], str(row["bytes"]))
            self.assertEqual(cells[-6], time_text(row["percentiles_us"]["p50"]["value"]))
            self.assertEqual(cells[-2], time_text(row["percentiles_us"]["p99"]["value"]))
            self.assertEqual(cells[-1], "-")

    def test_too_few_samples_and_batches_exit_2_naming_the_flags(self):
        for args, names in [(["--percentiles", "99", "-n", "50"], "-n/--iters 50"),
                            (["--percentiles", "99", "--batch", "4"], "--batch 4"),
                            (["--percentiles", "0"], "--percentiles")]:
            with self.subTest(args=args):
                out = os.path.join(self.dir, "refused.json")
                p = m.run(["-p", "shm", "--ops", "pingpong", "-b", "8", "-e", "8", "-J", out] + args, timeout=60)
                self.assertEqual(p.returncode, 2, p.stderr)
                lines = [l for l in p.stderr.splitlines() if "--percentiles" in l]
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn(names, lines[0])
                self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
