#!/usr/bin/python3
"""`ccbench screen` takes `ccbench run`'s flags of the same names (sweep/run_flags): a value run takes,
the screen takes; a value run refuses, the screen refuses before any test, exit 2, with run's one line.
Run is started under a real mpirun (one rank); the screen starts no launcher."""
import os
import subprocess
import sys
import tempfile
import unittest

CCBENCH = os.environ["CCBENCH"]
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none", "-np", "1"]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
# A -J run refuses after parsing every flag: its error says the flags before it were taken.
BAD_JSON = "/proc/no/such/dir/r.json"


def stderr_message(process, command):
    """The one line `ccbench COMMAND: ...` on stderr, without its prefix."""
    lines = [line for line in process.stderr.splitlines() if line.startswith(f"ccbench {command}: ")]
    assert len(lines) == 1, f"{command}: expected one message line, got {process.stderr!r}"
    return lines[0][len(f"ccbench {command}: "):]


class ScreenTakesRunFlags(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.TemporaryDirectory()
        self.empty_path = os.path.join(self.work.name, "bin")  # no launcher on it
        os.mkdir(self.empty_path)

    def tearDown(self):
        self.work.cleanup()

    def run_run(self, flags):
        return subprocess.run(MPIRUN + [CCBENCH, "run", "-b", "1K", "-e", "1K", "--ops", "allreduce"] + flags +
                              ["-J", BAD_JSON], capture_output=True, text=True, timeout=120, env=ENV)

    def run_screen(self, flags):
        out = os.path.join(self.work.name, "out")
        return subprocess.run([CCBENCH, "screen", "--hosts", "a,b", "--out", out] + flags, capture_output=True,
                              text=True, timeout=30, env=dict(ENV, PATH=self.empty_path))

    def test_values_run_takes_the_screen_takes(self):
        # The last three the screen refused before it took run's flags (-w above 100000, -T below 1,
        # --max-time-per-size below 0.01).
        for flags in (["-n", "7"], ["-w", "200000"], ["-T", "0"], ["--max-time-per-size", "0.005"]):
            with self.subTest(flags=flags):
                run = self.run_run(flags)
                self.assertEqual(run.returncode, 2, run.stderr)
                self.assertTrue(stderr_message(run, "run").startswith(f"-J/--json {BAD_JSON}"), run.stderr)
                screen = self.run_screen(flags)
                self.assertEqual(screen.returncode, 2, screen.stderr)
                self.assertEqual(stderr_message(screen, "screen"), "--launcher mpirun: 'mpirun' is not on PATH")

    def test_values_run_refuses_the_screen_refuses_in_the_same_words(self):
        cases = [
            (["-n", "0"], "-n/--iters: '0' is not a positive count or 'auto'"),
            (["-n", "many"], "-n/--iters: 'many' is not a positive count or 'auto'"),
            (["-w", "-1"], "-w/--warmup must not be negative"),
            (["-T", "nan"], "-T/--timeout: 'nan' is not a finite number"),
            (["-T", "9.3e9"], "-T/--timeout: 9.3e9 is out of range (0 = no watchdog, up to 1000000 seconds)"),
            (["--max-time-per-size", "0"], "--max-time-per-size must be positive"),
            (["--backend", "gloo"], "--backend: unknown backend 'gloo' (known: mpi, nccl, libfabric)"),
            (["--path", "ib"], "--path applies to --backend nccl only"),  # mpi: refused before the value
        ]
        for flags, message in cases:
            with self.subTest(flags=flags):
                run = self.run_run(flags)
                self.assertEqual(run.returncode, 2, run.stderr)
                self.assertEqual(stderr_message(run, "run"), message)
                screen = self.run_screen(flags)
                self.assertEqual(screen.returncode, 2, screen.stderr)
                self.assertEqual(stderr_message(screen, "screen"), message)
                self.assertFalse(os.path.exists(os.path.join(self.work.name, "out")), "a usage error created --out")


if __name__ == "__main__":
    sys.exit(unittest.main())
