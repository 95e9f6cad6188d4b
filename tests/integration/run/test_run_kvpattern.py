#!/usr/bin/python3
"""sendrecv --pattern / --peer-group / --block-bytes under a real mpirun (2 and 4 ranks): every
pattern checks zero wrong, the row's pattern fields and bandwidths against docs/method.md's
definitions; a corrupted block on a receiver is exit 1 with that row's wrong count, on a rank that
receives nothing it is not looked at; the refusals are exit 2 naming the flag."""
import os
import shutil
import unittest

import ccbench_mpi as m

# One size, 4 KiB of int32 (1024 elements), in blocks of 1 KiB: four blocks per message.
ARGS = ["--ops", "sendrecv", "-b", "4K", "-e", "4K", "-n", "2", "-w", "1", "-d", "int32", "--in-place", "no",
        "--progress", "never"]


class SendrecvPatterns(unittest.TestCase):
    def run_pattern(self, np, args, extra_env=None, code=0):
        folder = m.tmpdir()
        self.addCleanup(shutil.rmtree, folder, True)
        out = os.path.join(folder, "r.json")
        p = m.run(np, ARGS + args + ["-J", out], timeout=120, extra_env=extra_env)
        self.assertEqual(p.returncode, code, f"np={np} {args}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
        return (m.load(out) if code != 2 else None), p

    def test_each_pattern_moves_and_checks_every_block(self):
        # (np, flags, peer group, messages, most received, bus factor), by hand from docs/method.md.
        cases = [
            (4, ["--pattern", "pairwise", "--peer-group", "2"], 2, 2, 1, 1),
            (4, ["--pattern", "many-to-one"], 4, 3, 3, 3),  # the group defaults to all 4 ranks
            (4, ["--pattern", "one-to-many", "--peer-group", "2"], 2, 2, 1, 1),
            (2, ["--pattern", "many-to-one"], 2, 1, 1, 1),
            (2, ["--pattern", "ring"], 0, 2, 1, 1),
        ]
        for np, flags, group, messages, most_received, factor in cases:
            with self.subTest(np=np, flags=flags):
                doc, _ = self.run_pattern(np, flags + ["--block-bytes", "1K"])
                [row] = doc["results"]
                self.assertEqual((row["op"], row["bytes"], row["count"], row["wrong"]), ("sendrecv", 4096, 1024, 0))
                pattern = row["sendrecv_pattern"]
                self.assertEqual((pattern["pattern"], pattern["peer_group"], pattern["block_bytes"]),
                                 (flags[1], group, 1024))
                median_s = row["time_us"]["median"] * 1e-6
                algbw = 4096 / median_s / 1e9
                self.assertAlmostEqual(row["busbw_gbps"], algbw * factor, delta=1e-9 * algbw * factor)
                self.assertAlmostEqual(pattern["aggregate_gbps"], messages * algbw, delta=1e-9 * messages * algbw)
                self.assertAlmostEqual(pattern["per_receiver_gbps"], most_received * algbw,
                                       delta=1e-9 * most_received * algbw)
                self.assertEqual(doc["config"]["pattern"], flags[1])

    def test_a_corrupted_block_on_the_receiver_fails_the_row(self):
        # many-to-one on 4 ranks: rank 0 receives from 1, 2 and 3; rank 2 only sends.
        doc, p = self.run_pattern(4, ["--pattern", "many-to-one", "--block-bytes", "1K"],
                                  extra_env={"CCBENCH_TEST_CORRUPT_RANK": "0"}, code=1)
        self.assertIn("data check failed", p.stderr)
        self.assertEqual([r["wrong"] for r in doc["results"]], [1])
        doc, _ = self.run_pattern(4, ["--pattern", "many-to-one"], extra_env={"CCBENCH_TEST_CORRUPT_RANK": "2"})
        self.assertEqual([r["wrong"] for r in doc["results"]], [0])

    def test_refusals_name_the_flag(self):
        for np, args, text in [
            (4, ["--pattern", "many-to-one", "--peer-group", "3"],
             "--peer-group: a peer group of 3 ranks does not divide the 4 ranks"),
            (4, ["--pattern", "pairwise", "--peer-group", "1"], "--peer-group: 1 ranks; a group needs at least 2"),
            (2, ["--peer-group", "2"], "--peer-group: the ring pattern takes no peer group"),
            (2, ["--pattern", "star"], "--pattern: unknown value 'star'"),
            (2, ["--block-bytes", "6"], "--block-bytes: 6 is not a whole number of int32 elements (4 bytes)"),
            (2, ["--pattern", "pairwise", "--ops", "allreduce"], "--pattern: applies to --ops sendrecv only, not allreduce"),
        ]:
            with self.subTest(args=args):
                _, p = self.run_pattern(np, args, code=2)
                self.assertIn(text, p.stderr)


if __name__ == "__main__":
    unittest.main()
