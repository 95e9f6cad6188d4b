#!/usr/bin/python3
"""Bad flags, configs and environments fail before measuring with exit 2 and a message naming what
is wrong; --config YAML works and flags win over it."""
import os
import unittest

import ccbench_mpi as m

QUICK = ["-b", "1K", "-e", "2K", "-n", "2", "-w", "0"]


class Usage(unittest.TestCase):
    def expect_usage(self, args, needle, np=2, extra_env=None):
        p = m.run(np, args, timeout=120, extra_env=extra_env)
        self.assertEqual(p.returncode, 2, f"{args}: rc {p.returncode}\n{p.stdout}\n{p.stderr}")
        self.assertIn(needle, p.stderr, args)
        self.assertNotIn("# allreduce", p.stdout, "measured despite the error")
        # Only rank 0 speaks.
        self.assertEqual(p.stderr.count("ccbench run:"), 1, p.stderr)

    def test_bad_flags(self):
        cases = [
            (["--ops", "allreduce,allscatter"], "--ops: unknown op 'allscatter'"),
            (["-b", "12Q"], "-b/--min-bytes: invalid size '12Q'"),
            (["-b", "1M", "-e", "1K"], "is larger than --max-bytes"),
            (["-d", "float7"], "-d/--dtype: unknown value 'float7'"),
            (["-o", "xor"], "-o/--redop: unknown value 'xor'"),
            (["-n", "0"], "-n/--iters: '0' is not a positive count"),
            (["--target-ci", "2"], "--target-ci must be in (0, 1)"),
            (["--in-place", "maybe"], "--in-place: expected yes, no or both"),
            (["-c", "2"], "-c/--check: expected 0 or 1"),
            (["-f", "1"], "-f/--step-factor must be greater than 1"),
            (["--no-such-flag"], "--no-such-flag"),
            (["--backend", "gloo"], "--backend: unknown backend 'gloo'"),
            (["--ops", "pingpong"], "is a `ccbench fabric` test"),
            (["--root", "5", "--ops", "broadcast"], "--root 5 is not a rank"),
            (["-d", "half", "--ops", "allreduce"], "MPI has no half type"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                self.expect_usage(QUICK + args, needle)

    def test_unwritable_output(self):
        self.expect_usage(QUICK + ["-J", "/proc/no/such/dir/r.json"], "-J/--json /proc/no/such/dir/r.json")

    def test_sizes_that_cannot_fit_in_memory(self):
        self.expect_usage(["-b", "512G", "-e", "512G", "--ops", "allreduce"], "-e/--max-bytes 512G")

    def test_numbers_that_are_not_finite_or_out_of_range(self):
        # -T nan used to disable the watchdog silently, inf and 9.3e9 overflowed its deadline.
        cases = [
            (["-T", "nan"], "ccbench run: -T/--timeout: 'nan' is not a finite number"),
            (["-T", "inf"], "ccbench run: -T/--timeout: 'inf' is not a finite number"),
            (["-T", "9.3e9"], "ccbench run: -T/--timeout: 9.3e9 is out of range (0 = no watchdog, up to 1000000 seconds)"),
            (["--link-gbps", "nan"], "ccbench run: --link-gbps: 'nan' is not a finite number"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                self.expect_usage(QUICK + args, needle)

    def test_bad_output_never_replaces_a_good_file(self):
        d = m.tmpdir()
        good = os.path.join(d, "good.json")
        p = m.run(2, QUICK + ["--ops", "allreduce", "-J", good], timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(good) as f:
            before = f.read()
        # The .jsonl stream's name is a folder: exit 2 naming it, the good file untouched.
        os.remove(good + "l")
        os.mkdir(good + "l")
        self.expect_usage(QUICK + ["--ops", "allreduce", "-J", good],
                          f"ccbench run: -J/--json {good}: its result stream {good}l is a directory")
        os.rmdir(good + "l")
        # Buffers whose sizes sum past 2^64 (they wrapped, passed the memory check and ended in
        # std::bad_alloc): exit 2 naming the flags, the good file untouched.
        self.expect_usage(["-b", "8388608T", "-e", "8388608T", "--ops", "allreduce", "-J", good],
                          "ccbench run: -b/--min-bytes and -e/--max-bytes 8388608T: the buffers of the largest "
                          "case exceed 2^64 bytes per rank")
        # -J itself a folder.
        self.expect_usage(QUICK + ["-J", d], f"ccbench run: -J/--json {d}: is a directory")
        with open(good) as f:
            self.assertEqual(f.read(), before)

    def test_nccl_without_a_gpu(self):
        p = m.run(1, QUICK + ["--backend", "nccl"], timeout=120)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--backend nccl", p.stderr)

    def test_bad_config_files(self):
        d = m.tmpdir()
        bad_key = os.path.join(d, "bad_key.yaml")
        with open(bad_key, "w") as f:
            f.write("ops: [allreduce]\nmax_bytes: 4K\nmax_bites: 8K\n")
        self.expect_usage(["--config", bad_key], f"{bad_key}:3: unknown key 'max_bites'")
        bad_yaml = os.path.join(d, "bad.yaml")
        with open(bad_yaml, "w") as f:
            f.write("ops: [allreduce\nmax_bytes: 4K\n")
        self.expect_usage(["--config", bad_yaml], f"{bad_yaml}:")
        bad_value = os.path.join(d, "bad_value.yaml")
        with open(bad_value, "w") as f:
            f.write("dtype: quad\n")
        self.expect_usage(["--config", bad_value], "-d/--dtype: unknown value 'quad'")
        self.expect_usage(["--config", os.path.join(d, "missing.yaml")], "no such file")

    def test_config_file_and_flags_win(self):
        d = m.tmpdir()
        cfg = os.path.join(d, "sweep.yaml")
        with open(cfg, "w") as f:
            f.write("ops: [allgather, broadcast]\nmin_bytes: 1K\nmax_bytes: 4K\niters: 4\n"
                    "in_place: no\ndtype: int32\nlabel: from-config\n")
        out = os.path.join(d, "r.json")
        p = m.run(2, ["--config", cfg, "-n", "3", "-J", out])
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = m.load(out)
        self.assertEqual({r["op"] for r in doc["results"]}, {"allgather", "broadcast"})
        self.assertEqual({r["bytes"] for r in doc["results"]}, {1024, 2048, 4096})
        self.assertTrue(all(len(r["samples_us"]) == 3 for r in doc["results"]))  # the flag won
        self.assertTrue(all(not r["in_place"] for r in doc["results"]))
        self.assertEqual(doc["run"]["label"], "from-config")
        self.assertEqual(doc["config"]["dtype"], "int32")

    def test_shipped_sweeps_parse(self):
        for name in ["quick", "full", "ci-small"]:
            with self.subTest(sweep=name):
                p = m.run(1, ["--config", os.path.join(m.SOURCE, "configs/sweeps", name + ".yaml"), "--help"])
                self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    unittest.main()
