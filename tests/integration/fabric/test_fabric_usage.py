#!/usr/bin/python3
"""Bad input ends before measuring with exit 2 and a message; --list-providers needs no launcher."""
import subprocess
import time
import unittest

import fabric_mpi as m


class Usage(unittest.TestCase):
    def test_list_providers_without_mpirun(self):
        r = subprocess.run([m.CCBENCH, "fabric", "--list-providers"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("provider", r.stdout)
        self.assertIn("endpoint", r.stdout)
        providers = {line.split()[0] for line in r.stdout.splitlines()[1:] if line.strip()}
        self.assertIn("shm", providers)
        self.assertTrue(any(p.startswith("tcp") for p in providers), providers)

    def test_says_how_long_before_the_first_test(self):
        # `-p tcp` with five ops measured a minute without a line (the per-size progress line shows
        # only where stderr is a terminal, and under mpirun it is a pipe).
        r = m.run(["-p", "tcp", "--ops", "pingpong,bw", "-e", "64"] + m.QUICK)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.splitlines()[0],
                         "ccbench fabric: 8 tests; sampling alone takes up to 0.4 s (--max-time-per-size 0.05 s a "
                         "test), warm-ups and calibration on top; --progress always prints a line per test with the "
                         "time left")
        r = m.run(["-p", "tcp", "--ops", "pingpong", "-b", "8", "-e", "8", "-n", "10", "--progress", "always"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.splitlines()[0], "ccbench fabric: 1 test")
        self.assertRegex(r.stderr.splitlines()[1], r"^\[1/1\] fabric_pingpong 8 out-of-place: .* s left$")

    def test_unknown_provider_exits_2_listing_the_offered(self):
        r = m.run(["-p", "nosuchprov", "--ops", "pingpong"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("nosuchprov", r.stderr)
        self.assertIn("no such provider", r.stderr)
        self.assertIn("shm", r.stderr)
        self.assertIn("tcp", r.stderr)

    def test_bad_flags_exit_2(self):
        for args, text in ((["--ops", "allreduce"], "--ops"), (["--window", "0"], "--window"),
                           (["--memory", "rocm"], "--memory"), (["-n", "x"], "-n/--iters")):
            r = m.run(args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(text, r.stderr)

    def test_needs_exactly_two_ranks(self):
        r = m.run(["--ops", "pingpong"], np=3)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("exactly 2 ranks", r.stderr)

    def test_cuda_memory_without_gpu_exits_2(self):
        r = m.run(["-p", "shm", "--memory", "cuda", "--ops", "pingpong"])
        if r.returncode == 0:
            self.skipTest("a GPU and an FI_HMEM provider are present")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--memory cuda", r.stderr)

    def test_unknown_domain_exits_2(self):
        r = m.run(["-p", "tcp", "-D", "no-such-nic", "--ops", "pingpong"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("no-such-nic", r.stderr)

    def test_provider_that_cannot_reach_the_peer_exits_2(self):
        # The ranks disagree on the provider (as when FI_PROVIDER differs between nodes): rank 0's tcp
        # cannot talk to rank 1's udp. The probe before measuring fails within -T seconds on both.
        one = ["--ops", "pingpong", "-T", "3"]
        cmd = m.MPIRUN + ["-np", "1", m.CCBENCH, "fabric", "-p", "tcp"] + one + \
            [":", "-np", "1", m.CCBENCH, "fabric", "-p", "udp"] + one
        t0 = time.time()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=m.env())
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("cannot reach the peer", r.stderr)
        self.assertLess(time.time() - t0, 30)

    def test_help_exits_0(self):
        r = m.run(["--help"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--provider", r.stdout)


if __name__ == "__main__":
    unittest.main()
