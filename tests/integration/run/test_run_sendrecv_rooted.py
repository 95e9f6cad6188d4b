#!/usr/bin/python3
"""sendrecv, gather, scatter and reduce under a real mpirun: zero wrong on 2 and 3 ranks with a
non-zero root, in and out of place (sendrecv out of place only), busbw = algbw x the factor of
docs/method.md; the check runs where a result lands (a corrupted element on the root is exit 1, on
a rank that holds no gather or reduce result it is not looked at); --groups checks each group."""
import os
import shutil
import unittest

import ccbench_mpi as m

OPS = "sendrecv,gather,scatter,reduce"
# 1 B .. 16807 B by 7: sizes that are not multiples of the rank count or the element size exercise
# nccl-tests' rounding (gather and scatter: a whole 16 bytes per rank).
FAST = ["-b", "1", "-e", "40000", "-f", "7", "-n", "3", "-w", "1", "--in-place", "both", "-c", "1",
        "--progress", "never"]


def factor(op, n):
    return (n - 1) / n if op in ("gather", "scatter") else 1.0


class SendrecvAndRootedOps(unittest.TestCase):
    def run_ok(self, np, args, extra_env=None, code=0):
        folder = m.tmpdir()
        self.addCleanup(shutil.rmtree, folder, True)
        out = os.path.join(folder, "r.json")
        p = m.run(np, args + ["-J", out], timeout=120, extra_env=extra_env)
        self.assertEqual(p.returncode, code, f"np={np} {args}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
        return m.load(out), p

    def test_correct_on_two_and_three_ranks_with_the_last_rank_as_root(self):
        for np, dtype, redop in [(2, "int32", "sum"), (3, "float", "max")]:
            with self.subTest(np=np):
                root = np - 1
                doc, p = self.run_ok(np, FAST + ["--ops", OPS, "-d", dtype, "-o", redop, "--root", str(root)])
                rows = doc["results"]
                self.assertEqual(sum(r["wrong"] for r in rows), 0)
                seen = {(r["op"], r["in_place"]) for r in rows}
                self.assertEqual(seen, {("sendrecv", False), ("gather", False), ("gather", True), ("scatter", False),
                                        ("scatter", True), ("reduce", False), ("reduce", True)})
                self.assertIn("sendrecv in-place", p.stdout + p.stderr)  # skipped, with the reason
                for r in rows:
                    self.assertEqual(r["ranks"], np)
                    self.assertEqual(r["root"], -1 if r["op"] == "sendrecv" else root, r["op"])
                    self.assertEqual(r["redop"], redop if r["op"] == "reduce" else "none", r["op"])
                    algbw = r["bytes"] / (r["time_us"]["median"] * 1e-6) / 1e9
                    self.assertAlmostEqual(r["algbw_gbps"], algbw, delta=1e-9 * max(1, algbw))
                    self.assertAlmostEqual(r["busbw_gbps"], algbw * factor(r["op"], np), delta=1e-9 * max(1, algbw))
                # The largest size, 16807 B (7^5) of float on 3 ranks: sendrecv and reduce 4201 floats = 16804 B;
                # gather and scatter 4201 / 3 = 1400 floats per rank (a multiple of 16 B / 4 B), S = 1400 x 3 x 4
                # = 16800 B.
                if np == 3:
                    largest = {r["op"]: r["bytes"] for r in rows if r["bytes"] > 10000}
                    self.assertEqual(largest, {"sendrecv": 16804, "gather": 16800, "scatter": 16800, "reduce": 16804})

    def test_the_check_runs_where_the_result_lands(self):
        args = ["-b", "3K", "-e", "3K", "-n", "2", "-w", "1", "--root", "1", "-d", "int32", "--progress", "never"]
        # On the root every op's result is checked: one wrong element in every row.
        doc, p = self.run_ok(3, args + ["--ops", OPS], extra_env={"CCBENCH_TEST_CORRUPT_RANK": "1"}, code=1)
        self.assertIn("data check failed", p.stderr)
        self.assertEqual({(r["op"], r["wrong"]) for r in doc["results"]},
                         {("sendrecv", 1), ("gather", 1), ("scatter", 1), ("reduce", 1)})
        # Rank 2 holds no gather or reduce result: its receive buffer is not looked at.
        doc, _ = self.run_ok(3, args + ["--ops", "gather,reduce"], extra_env={"CCBENCH_TEST_CORRUPT_RANK": "2"})
        self.assertEqual({r["wrong"] for r in doc["results"]}, {0})

    def test_groups_check_each_communicator(self):
        # 4 ranks, mod:2: groups {0,2} and {1,3}; root 1 of each group is world rank 2 or 3. A corrupted
        # element on world rank 3 (the second group's root) fails that group only, in every row.
        args = ["-b", "64", "-e", "4K", "-f", "8", "-n", "2", "-w", "1", "--ops", OPS, "--root", "1", "-d", "int32",
                "--groups", "mod:2", "--progress", "never"]
        doc, _ = self.run_ok(4, args)
        self.assertEqual({tuple(r["groups"]["wrong_per_group"]) for r in doc["results"]}, {(0, 0)})
        doc, _ = self.run_ok(4, args, extra_env={"CCBENCH_TEST_CORRUPT_RANK": "3"}, code=1)
        self.assertEqual({tuple(r["groups"]["wrong_per_group"]) for r in doc["results"]}, {(0, 1)})


if __name__ == "__main__":
    unittest.main()
