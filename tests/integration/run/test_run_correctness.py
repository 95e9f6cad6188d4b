#!/usr/bin/python3
"""Every op, dtype and redop, in and out of place, with the check on: zero wrong on 2 and 4 ranks;
and a result corrupted on purpose (test-only hook) gives exit 1."""
import os
import re
import shutil
import unittest

import ccbench_mpi as m

DTYPES = ["int8", "uint8", "int32", "int64", "float", "double"]
ALL_OPS = "allreduce,allgather,alltoall,reduce_scatter,broadcast"
# Sizes that are not multiples of the rank count or element size exercise nccl-tests' rounding.
FAST = ["-b", "1", "-e", "40000", "-f", "7", "-n", "3", "-w", "1", "--in-place", "both", "-c", "1"]


class Correctness(unittest.TestCase):
    def check_run(self, np, dtype, redop, ops, extra=()):
        d = m.tmpdir()
        out = os.path.join(d, "r.json")
        p = m.run(np, FAST + ["--ops", ops, "-d", dtype, "-o", redop, "-J", out] + list(extra))
        self.stdout = p.stdout
        self.assertEqual(p.returncode, 0, f"{dtype} {redop} np={np}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
        doc = m.load(out)
        self.assertEqual(doc["run"]["status"], "complete")
        rows = doc["results"]
        self.assertTrue(rows)
        self.assertEqual(sum(r["wrong"] for r in rows), 0)
        seen = {(r["op"], r["in_place"]) for r in rows}
        for op in ops.split(","):
            self.assertIn((op, False), seen, f"{op} out-of-place missing")
            self.assertIn((op, True), seen, f"{op} in-place missing")
        for r in rows:
            self.assertEqual(r["dtype"], dtype)
            self.assertEqual(r["ranks"], np)
            self.assertEqual(len(r["samples_us"]), 3)
        return doc

    def test_every_dtype_every_op_two_ranks(self):
        for dtype in DTYPES:
            with self.subTest(dtype=dtype):
                self.check_run(2, dtype, "sum", ALL_OPS)

    def test_every_redop_two_ranks(self):
        for dtype in DTYPES:
            for redop in ["prod", "min", "max"]:
                with self.subTest(dtype=dtype, redop=redop):
                    self.check_run(2, dtype, redop, "allreduce,reduce_scatter")

    def test_four_ranks(self):
        for dtype, redop in zip(DTYPES, ["sum", "prod", "min", "max", "sum", "prod"]):
            with self.subTest(dtype=dtype, redop=redop):
                self.check_run(4, dtype, redop, ALL_OPS)

    # Every rank's input pattern differs, and the check expects the root's on every rank: zero wrong
    # with rows of root 3 means ranks 0-2 received rank 3's data. A --root lost on the way to the
    # plan (broadcast from 0, checked against 0) passed when only the wrong count was asserted.
    def test_broadcast_from_another_root(self):
        doc = self.check_run(4, "int32", "sum", "broadcast", ["--root", "3"])
        self.assertEqual(doc["config"]["root"], 3)
        self.assertTrue(doc["config"]["check"])
        self.assertEqual({r["root"] for r in doc["results"]}, {3})
        table = re.findall(r"^\s+\d+\s+\d+\s+int32\s+\S+\s+(-?\d+)\s", self.stdout, re.MULTILINE)
        self.assertEqual(len(table), len(doc["results"]) // 2, self.stdout)  # one line: out- and in-place
        self.assertEqual(set(table), {"3"}, self.stdout)
        # The check runs on the receivers of root 3: a received element changed on rank 1 is exit 1
        # with one wrong element in every row.
        folder = m.tmpdir()
        self.addCleanup(shutil.rmtree, folder, True)
        out = os.path.join(folder, "r.json")
        p = m.run(4, FAST + ["--ops", "broadcast", "-d", "int32", "--root", "3", "-J", out],
                  extra_env={"CCBENCH_TEST_CORRUPT_RANK": "1"})
        self.assertEqual(p.returncode, 1, p.stderr)
        rows = m.load(out)["results"]
        self.assertEqual({(r["root"], r["wrong"]) for r in rows}, {(3, 1)})

    def test_corrupted_result_exits_1(self):
        d = m.tmpdir()
        out = os.path.join(d, "r.json")
        p = m.run(2, ["-b", "1K", "-e", "4K", "-n", "3", "--ops", "allreduce", "-J", out],
                  extra_env={"CCBENCH_TEST_CORRUPT_RANK": "1"})
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("data check failed", p.stderr)
        doc = m.load(out)
        self.assertEqual(doc["run"]["exit_code"], 1)
        self.assertTrue(all(r["wrong"] == 1 for r in doc["results"]), [r["wrong"] for r in doc["results"]])
        # The table shows it too.
        self.assertRegex(p.stdout, r"\n\s+1024\s+256\s+float\s+sum\s+-1\s+\S+\s+\S+\s+\S+\s+1\s")

    def test_bandwidth_columns_follow_nccl_tests(self):
        doc = self.check_run(4, "float", "sum", ALL_OPS)
        factors = {"allreduce": 2 * 3 / 4, "allgather": 3 / 4, "alltoall": 3 / 4, "reduce_scatter": 3 / 4,
                   "broadcast": 1.0}
        for r in doc["results"]:
            algbw = r["bytes"] / (r["time_us"]["median"] * 1e-6) / 1e9
            self.assertAlmostEqual(r["algbw_gbps"], algbw, delta=1e-9 * max(1, algbw))
            self.assertAlmostEqual(r["busbw_gbps"], algbw * factors[r["op"]], delta=1e-9 * max(1, algbw))


if __name__ == "__main__":
    unittest.main()
