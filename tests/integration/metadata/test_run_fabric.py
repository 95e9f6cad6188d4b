#!/usr/bin/python3
"""The fabric section a real `ccbench run` records (2 ranks on one host: the path is shm).

Bug: without --link-gbps a run recorded the instance profile's EFA rate (p5en: 3200 Gbps) as
fabric.link_gbps although its traffic went over shared memory; a link-normalised comparison then
divided by a link the run never used.
"""
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none", "-np", "2"]


def run_fabric(tmp, name, *flags):
    out = Path(tmp) / f"{name}.json"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run(MPIRUN + [CCBENCH, "run", "--ops", "allreduce", "-b", "8", "-e", "8", "-n", "10",
                                 "--in-place", "no", "--instance-type", "p5en.48xlarge", "-J", str(out), *flags],
                       capture_output=True, text=True, timeout=240, env=env)
    if p.returncode != 0:
        raise AssertionError(f"exit {p.returncode}: {p.stderr}")
    return json.loads(out.read_text())["fabric"]


class RunFabric(unittest.TestCase):
    def test_link_rate_follows_the_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            shm = run_fabric(tmp, "shm")
            self.assertEqual(shm["path"], "shm")
            self.assertIsNone(shm["link_gbps"])  # was 3200, the profile's EFA rate
            self.assertEqual(shm["generation"], "v3")
            efa = run_fabric(tmp, "efa", "--fabric-path", "efa")
            self.assertEqual((efa["path"], efa["link_gbps"]), ("efa", 3200))
            given = run_fabric(tmp, "given", "--link-gbps", "100")
            self.assertEqual((given["path"], given["link_gbps"]), ("shm", 100))


if __name__ == "__main__":
    unittest.main()
