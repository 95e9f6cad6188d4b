#!/usr/bin/python3
"""Issue 15 through `ccbench run` under a real mpirun: --config values of the wrong YAML shape are
exit 2 naming key and line (was an uncaught yaml-cpp exception, exit 134); a label that is not
UTF-8 is recorded escaped and the run goes on; the host's load is recorded and a busy host is named
in the summary line."""
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "run"))
import ccbench_mpi as m  # noqa: E402

QUICK = ["-b", "1K", "-e", "4K", "-n", "3", "-w", "0", "--ops", "allreduce", "--in-place", "no"]


class HardenRun(unittest.TestCase):
    def test_config_values_of_the_wrong_shape(self):
        d = m.tmpdir()
        cases = [("ops: [{a: 1}]\n", ":1: 'ops': a list item must be a value, not a map"),
                 ("iters: 3\nmax_bytes: {a: 1}\n", ":2: 'max_bytes' must be a value or a list of values, not a map"),
                 ("? [a, b]\n: 1\n", ":1: a key must be a plain option name, not a list"),
                 ("label: \"open\n", ":1: unterminated quoted string")]
        for i, (text, needle) in enumerate(cases):
            cfg = os.path.join(d, f"c{i}.yaml")
            with open(cfg, "w") as f:
                f.write(text)
            with self.subTest(text=text):
                p = m.run(1, ["--config", cfg], timeout=120)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(f"ccbench run: {cfg}{needle}", p.stderr)
        loop = os.path.join(d, "loop.yaml")
        os.symlink(loop, loop)
        p = m.run(1, ["--config", loop], timeout=120)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"--config {loop}: symlink loop", p.stderr)

    def test_label_and_environment_that_are_not_utf8(self):
        out = os.path.join(m.tmpdir(), "r.json")
        env = m.env()
        env_b = {k.encode(): v.encode() for k, v in env.items()}
        env_b[b"NCCL_LATIN1_TEST"] = b"caf\xe9"
        cmd = [c.encode() for c in m.MPIRUN + ["-np", "1", "-x", "NCCL_LATIN1_TEST", m.CCBENCH, "run"] + QUICK +
               ["-J", out]] + [b"--label", b"r\xe9sultat"]
        p = subprocess.run(cmd, capture_output=True, timeout=300, env=env_b)
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        # The label is also in the command line (and in Open MPI's OMPI_ARGV).
        self.assertIn(b"ccbench: warning: not UTF-8, recorded with \\xNN escapes: /environment/NCCL_LATIN1_TEST, "
                      b"/environment/OMPI_ARGV, /run/command/16, /run/label\n", p.stderr)
        doc = m.load(out)
        self.assertEqual(doc["run"]["label"], "r\\xE9sultat")
        self.assertEqual(doc["environment"]["NCCL_LATIN1_TEST"], "caf\\xE9")
        self.assertIn("/run/label", doc["run"]["non_utf8_escaped"])

    def test_host_load_is_recorded_and_a_busy_host_named(self):
        out = os.path.join(m.tmpdir(), "busy.json")
        burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
        try:
            p = m.run(1, QUICK + ["-e", "1M", "-n", "200", "-J", out], timeout=300)
        finally:
            for b in burners:
                b.kill()
                b.wait()
        self.assertEqual(p.returncode, 0, p.stderr)
        h = m.load(out)["system"]["host_load"]
        for key in ("window_s", "cpus_online", "cores", "load_avg_1m", "steal_share", "others_core_share",
                    "others_top"):
            self.assertIn(key, h)
        self.assertGreater(h["window_s"], 0.0)  # the run lasts as long as the machine makes it
        self.assertGreaterEqual(h["others_core_share"], 0.10, h)
        names = [t["name"][:7] for t in h["others_top"]]
        self.assertTrue(all(names), h)
        # The burners are named among the top three, unless three processes outside this test (a build
        # beside it) each used more of a core than they got: the list is the top three by share.
        if "python3" not in names:
            self.assertEqual(len(h["others_top"]), 3, h)
            self.assertTrue(all(t["core_share"] >= 0.2 for t in h["others_top"]), h)
        self.assertIn("# host busy: other processes used ", p.stdout)


if __name__ == "__main__":
    unittest.main()
