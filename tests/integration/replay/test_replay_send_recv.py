"""`ccbench replay`'s sends and receives under a real mpirun: every receive checked, and a trace
whose sends and receives do not pair refused before any call."""
import json
import os
import subprocess
import tempfile
import unittest

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = os.environ.get("CCBENCH_SOURCE", ".")
# 3 ranks: a ring (each rank sends int32 x1000 and double x300 to the next and receives them from
# the one before, one batch), an allreduce, then rank 0 sends rank 1 two messages of float x64
# alike: only their number on the pair tells them apart.
RING = os.path.join(SOURCE, "tests", "data", "replay", "ring_send_recv.trace.json")
# 1 rank sends 1 Mi floats to itself and receives them in the same batch.
SELF = os.path.join(SOURCE, "tests", "data", "replay", "self_send_recv.trace.json")
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]


def replay(args, np=3, timeout=60):
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return subprocess.run(MPIRUN + ["-np", str(np), CCBENCH, "replay"] + args, capture_output=True, text=True, timeout=timeout,
                          env=env)


class ReplaySendRecvCheck(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="ccbench_replay_p2p_")
        self.addCleanup(self.dir.cleanup)

    def test_every_receive_is_checked(self):
        out = os.path.join(self.dir.name, "ring.json")
        p = replay([RING, "--steps", "3", "--gaps", "none", "--check", "1", "-T", "20", "-J", out])
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["run"]["status"], "complete")
        rows = doc["results"]
        # Sites in order of first appearance: rank 0's five calls, rank 1's two float receives.
        self.assertEqual([(r["op"], r["dtype"], r["count"], r["replay"]["calls"]) for r in rows], [
            ("send", "int32", 1000, 1),
            ("recv", "int32", 1000, 1),
            ("send", "double", 300, 1),
            ("recv", "double", 300, 1),
            ("allreduce", "float", 256, 1),
            ("send", "float", 64, 2),
            ("recv", "float", 64, 2),
            ("replay_step", "none", 7, 7),
        ])
        self.assertEqual(rows[-1]["wrong"], 0)
        self.assertEqual(rows[-1]["replay"]["steps"], 3)

    def test_a_rank_sending_to_itself(self):
        # Its send and its receive are the same message: numbered alike though on one rank.
        out = os.path.join(self.dir.name, "self.json")
        p = replay([SELF, "--steps", "3", "--gaps", "none", "--check", "1", "-T", "20", "-J", out], np=1)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            rows = json.load(f)["results"]
        self.assertEqual([(r["op"], r["bytes"]) for r in rows], [("send", 4194304), ("recv", 4194304),
                                                                  ("replay_step", 8388608)])
        self.assertEqual(rows[-1]["wrong"], 0)

    def test_a_recv_without_its_send_is_refused(self):
        with open(RING) as f:
            doc = json.load(f)
        del doc["ranks"][0]["calls"][6]  # rank 0's 2nd float send: rank 1's 4th receive from it has none
        path = os.path.join(self.dir.name, "unpaired.trace.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        out = os.path.join(self.dir.name, "never.json")
        p = replay([path, "-T", "20", "-J", out])
        self.assertEqual(p.returncode, 2, p.stderr)
        lines = [l for l in p.stderr.splitlines() if l.startswith("ccbench replay:")]
        self.assertEqual(lines, [
            f"ccbench replay: {path}: ranks[1].calls[6]: recv 3 at trace rank 1 from trace rank 0 on group 'world' "
            "(float x64) has no matching send: rank 0 posts 3 sends to rank 1 (the n-th send from a rank to a peer "
            "pairs with the peer's n-th recv from it; replayed, it would hang)"])
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
