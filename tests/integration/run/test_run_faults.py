#!/usr/bin/python3
"""A rank that dies, a rank that stops, and a termination signal: the run ends (never hangs) with
the documented exit code, a message naming what failed, and every finished size kept."""
import os
import signal
import time
import unittest

import ccbench_mpi as m

TIMEOUT_S = 4
# Enough sizes that the run is still going when the fault is injected.
LONG = ["--ops", "allreduce", "-b", "1K", "-e", "1G", "-f", "2", "-n", "200", "-w", "1",
        "--in-place", "no", "-T", str(TIMEOUT_S)]


class Faults(unittest.TestCase):
    def start(self, label, np=2, extra=(), launcher=None):
        d = m.tmpdir()
        out = os.path.join(d, "r.json")
        proc = m.start(np, LONG + ["--label", label, "-J", out] + list(extra), launcher=launcher)
        jsonl = out + "l"
        self.assertTrue(m.wait_for_rows(jsonl, 3), "no results appeared")
        pids = {}
        deadline = time.time() + 10
        while len(pids) < np and time.time() < deadline:
            pids = m.rank_pids(label)
            time.sleep(0.05)
        self.assertEqual(len(pids), np, pids)
        return proc, out, jsonl, pids

    def finish(self, proc, limit_s):
        t0 = time.time()
        try:
            stdout, stderr = proc.communicate(timeout=limit_s)
        except Exception:
            m.kill_group(proc)
            self.fail(f"the run did not end within {limit_s} s")
        return proc.returncode, stdout, stderr, time.time() - t0

    def test_stopped_rank_times_out_with_exit_3(self):
        proc, out, jsonl, pids = self.start("fault-stop")
        os.kill(pids[1], signal.SIGSTOP)
        t0 = time.time()
        rc, stdout, stderr, _ = self.finish(proc, TIMEOUT_S + 20)
        elapsed = time.time() - t0
        self.assertEqual(rc, 3, stderr)
        self.assertLess(elapsed, TIMEOUT_S + 10)
        # The message names op, size, trial and iteration, and the stopped peer.
        self.assertRegex(stderr, r"timeout: allreduce of \d+ bytes, out-of-place, trial 1, iteration \d+")
        self.assertIn("rank 1", stderr)
        self.assertIn("is stopped", stderr)
        doc = m.load(out)
        self.assertEqual(doc["run"]["status"], "incomplete")
        self.assertEqual(doc["run"]["exit_code"], 3)
        self.assertGreaterEqual(len(doc["results"]), 3)
        self.assertEqual(len(m.load_rows(jsonl)), len(doc["results"]))

    def test_killed_rank_ends_the_run_and_keeps_results(self):
        proc, out, jsonl, pids = self.start("fault-kill")
        kept_before = len(m.load_rows(jsonl))
        os.kill(pids[1], signal.SIGKILL)
        rc, stdout, stderr, elapsed = self.finish(proc, TIMEOUT_S + 20)
        self.assertLess(elapsed, TIMEOUT_S + 10)
        self.assertNotEqual(rc, 0)
        # Where the surviving rank can tell (it finds the peer's process gone), it says so with exit 4;
        # otherwise mpirun ends the job first with its own code. Either way nothing finished is lost.
        if rc == 4:
            self.assertIn("peer failed", stderr)
            self.assertIn("rank 1", stderr)
        rows = m.load_rows(jsonl)
        self.assertGreaterEqual(len(rows), kept_before)
        self.assertGreaterEqual(len(rows), 3)
        doc = m.load(out)
        self.assertNotEqual(doc["run"]["status"], "complete")
        print(f"killed rank: mpirun exit {rc}, {len(rows)} results kept, ended in {elapsed:.1f} s")

    def test_sigterm_writes_partial_file_interrupted(self):
        proc, out, jsonl, pids = self.start("fault-term")
        os.kill(pids[0], signal.SIGTERM)
        rc, stdout, stderr, elapsed = self.finish(proc, 30)
        self.assertIn("interrupted by SIGTERM", stderr)
        doc = m.load(out)
        self.assertEqual(doc["run"]["status"], "interrupted")
        self.assertEqual(doc["run"]["exit_code"], 128 + signal.SIGTERM)
        self.assertGreaterEqual(len(doc["results"]), 3)
        self.assertNotEqual(rc, 0)

    def test_sigint_to_the_launcher(self):
        # Ctrl-C on mpirun: it forwards SIGINT/SIGTERM to the ranks; the partial file must survive.
        proc, out, jsonl, pids = self.start("fault-int")
        os.kill(proc.pid, signal.SIGINT)
        rc, stdout, stderr, elapsed = self.finish(proc, 30)
        self.assertNotEqual(rc, 0)
        doc = m.load(out)
        self.assertIn(doc["run"]["status"], ["interrupted", "incomplete", "failed"])
        self.assertGreaterEqual(len(m.load_rows(jsonl)), 3)
        print(f"SIGINT to mpirun: exit {rc}, status {doc['run']['status']}, {len(doc['results'])} results in file")

    def test_signal_to_the_launcher_wrapper_says_interrupted(self):
        # Open MPI's mpirun exits 1 ("data check failed") on its own SIGTERM/SIGINT whatever the
        # ranks exit with; scripts/mpirun.sh gives 128+signal, as the result file says.
        wrapper = os.path.join(os.environ.get("CCBENCH_SOURCE", "."), "scripts", "mpirun.sh")
        for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
            with self.subTest(signal=sig.name):
                label = f"fault-wrap-{sig.name}"
                proc, out, jsonl, pids = self.start(label, launcher=[wrapper] + m.MPIRUN[1:])
                os.kill(proc.pid, sig)
                rc, stdout, stderr, elapsed = self.finish(proc, 30)
                self.assertEqual(rc, code, stderr)
                doc = m.load(out)
                self.assertEqual(doc["run"]["status"], "interrupted", stderr)
                self.assertEqual(doc["run"]["exit_code"], 128 + signal.SIGTERM)
                self.assertGreaterEqual(len(doc["results"]), 3)


if __name__ == "__main__":
    unittest.main()
