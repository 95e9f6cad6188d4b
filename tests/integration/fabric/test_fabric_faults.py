#!/usr/bin/python3
"""A peer that stalls mid-run: the watchdog ends the run with exit 3 within -T seconds plus a few,
names the op and size, and keeps every finished size in the JSON-lines stream and the result file."""
import os
import signal
import time
import unittest

import fabric_mpi as m

TIMEOUT_S = 3


class Faults(unittest.TestCase):
    def start(self, label, provider):
        out = os.path.join(m.tmpdir(), "r.json")
        # Many sizes with fixed samples: still running when the fault comes.
        args = ["-p", provider, "--ops", "pingpong,bw", "-b", "1", "-e", "1M", "-f", "2", "-n", "400", "-w", "1",
                "-T", str(TIMEOUT_S), "--label", label, "-J", out]
        proc = m.start(args)
        jsonl = out + "l"
        self.assertTrue(m.wait_for_rows(jsonl, 3), "no results appeared")
        pids = {}
        deadline = time.time() + 10
        while len(pids) < 2 and time.time() < deadline:
            pids = m.rank_pids(label)
            time.sleep(0.05)
        self.assertEqual(len(pids), 2, pids)
        return proc, out, jsonl, pids

    def stall(self, provider):
        proc, out, jsonl, pids = self.start(f"fabric-stop-{provider}", provider)
        os.kill(pids[1], signal.SIGSTOP)
        t0 = time.time()
        try:
            _, stderr = proc.communicate(timeout=TIMEOUT_S + 20)
        except Exception:
            m.kill_group(proc)
            self.fail("the run did not end")
        elapsed = time.time() - t0
        try:
            os.kill(pids[1], signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.assertEqual(proc.returncode, 3, stderr)
        self.assertLess(elapsed, TIMEOUT_S + 6)
        self.assertRegex(stderr, r"timeout: fabric_(pingpong|bw) of \d+ bytes")
        self.assertIn("rank 1", stderr)
        self.assertIn("is stopped", stderr)
        doc = m.load(out)
        self.assertEqual(doc["run"]["status"], "incomplete")
        self.assertEqual(doc["run"]["exit_code"], 3)
        self.assertGreaterEqual(len(doc["results"]), 3)
        self.assertEqual(len(m.load_rows(jsonl)), len(doc["results"]))
        print(f"{provider}: stalled peer -> exit 3 after {elapsed:.1f} s, {len(doc['results'])} results kept")

    def test_stalled_peer_on_shm_exits_3(self):
        self.stall("shm")

    def test_stalled_peer_on_tcp_exits_3(self):
        self.stall("tcp")


if __name__ == "__main__":
    unittest.main()
