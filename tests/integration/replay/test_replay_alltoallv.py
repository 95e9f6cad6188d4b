#!/usr/bin/python3
"""`ccbench replay` of a traced uneven alltoallv under a real mpirun (3 ranks): the hand-written
trace tests/data/replay/alltoallv_three.trace.json (its group lists the ranks as 2, 0, 1) replayed
with every received block checked, its row's size by hand, and again through --ranks-map."""
import json
import os
import subprocess
import tempfile
import unittest

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = os.environ.get("CCBENCH_SOURCE", ".")
TRACE = os.path.join(SOURCE, "tests", "data", "replay", "alltoallv_three.trace.json")
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]


def replay(args):
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return subprocess.run(MPIRUN + ["-np", "3", CCBENCH, "replay", TRACE] + args, capture_output=True, text=True,
                          timeout=60, env=env)


class ReplayAlltoallv(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="ccbench_replay_a2av_")
        self.addCleanup(self.dir.cleanup)

    def check(self, extra):
        out = os.path.join(self.dir.name, "r.json")
        p = replay(["--steps", "3", "--check", "1", "-J", out] + extra)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            doc = json.load(f)
        try:
            import jsonschema
            with open(os.path.join(SOURCE, "configs", "schema", "result.schema.json")) as f:
                jsonschema.validate(doc, json.load(f))
        except ImportError:  # scripts/setup.sh installs python3-jsonschema
            pass
        rows = {r["op"]: r for r in doc["results"]}
        # 23 floats in the matrix over 3 ranks: S = 92 / 3 = 30 bytes, 7 elements.
        a2av = rows["alltoallv"]
        self.assertEqual((a2av["bytes"], a2av["count"], a2av["ranks"], a2av["replay"]["group"]), (30, 7, 3, "rot"))
        self.assertEqual(rows["replay_step"]["wrong"], 0)
        self.assertEqual(len(a2av["samples_us"]), 3)

    def test_replayed_with_every_block_checked(self):
        self.check([])

    def test_through_a_rank_map(self):
        self.check(["--ranks-map", "1,2,0"])


if __name__ == "__main__":
    unittest.main()
