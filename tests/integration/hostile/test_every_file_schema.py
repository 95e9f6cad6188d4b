#!/usr/bin/python3
"""Every result file the project ships or writes validates against configs/schema/result.schema.json
(and screen.json against configs/schema/screen.schema.json): the shipped results/published/*.json,
`ccbench import` of nccl-tests text, nccl-tests -J JSON and OSU logs, `ccbench run` (plain and
--groups), `ccbench fabric` (shm), every phase file of `ccbench congestion`, and `ccbench screen`
with its tests' result files. Imported files failed it (`'version' is a required property` under
`tool`, issue 23). Runs under a real mpirun on this machine; about 40 s.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import jsonschema

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "run"))
import ccbench_mpi as m  # noqa: E402

ROOT = Path(m.SOURCE).resolve()
DATA = ROOT / "tests" / "data" / "compare"
QUICK = ["-b", "1K", "-e", "16K", "-f", "4", "-n", "3", "-w", "0", "--in-place", "no"]


def load_schema(name):
    with open(ROOT / "configs" / "schema" / name) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


class EveryFile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.schema = load_schema("result.schema.json")
        cls.d = Path(tempfile.mkdtemp(prefix="ccbench-schema-all-"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.d, ignore_errors=True)

    def valid(self, path, schema=None):
        with open(path) as f:
            doc = json.load(f)
        errors = sorted(jsonschema.Draft202012Validator(schema or self.schema).iter_errors(doc), key=str)
        self.assertEqual([f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:3]], [], str(path))
        return doc

    def test_shipped_published_results(self):
        files = sorted(glob.glob(str(ROOT / "results" / "published" / "*.json")))
        self.assertGreaterEqual(len(files), 11)
        for f in files:
            with self.subTest(f=os.path.basename(f)):
                self.assertIn("version", self.valid(f)["tool"])

    def test_imports(self):
        cases = [("nccl-tests", DATA / "nccl-tests-allreduce.txt", []),
                 ("nccl-tests", DATA / "nccl-tests-allreduce.json", []),
                 ("nccl-tests", DATA / "nccl-tests-allreduce-mpirun.txt", []),
                 ("osu", DATA / "osu-allreduce.txt", ["--ranks", "16"])]
        for i, (tool, log, extra) in enumerate(cases):
            out = self.d / f"import{i}.json"
            p = subprocess.run([m.CCBENCH, "import", tool, str(log), "--out", str(out)] + extra, capture_output=True,
                               text=True, timeout=60)
            with self.subTest(log=log.name):
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(self.valid(out)["tool"]["imported_from"], tool)

    def test_runs(self):
        plain = self.d / "run.json"
        p = m.run(2, QUICK + ["--ops", "allreduce,alltoall", "-J", str(plain)])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.valid(plain)
        groups = self.d / "groups.json"
        p = m.run(4, QUICK + ["--ops", "allreduce", "--groups", "mod:2", "-J", str(groups)])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("groups", self.valid(groups)["config"])

    def test_fabric(self):
        out = self.d / "fabric.json"
        p = subprocess.run(m.MPIRUN + ["-np", "2", m.CCBENCH, "fabric", "-p", "shm", "--ops", "pingpong,bw", "-b", "8",
                                       "-e", "4K", "-n", "3", "-J", str(out)], capture_output=True, text=True,
                           timeout=300, env=m.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.valid(out)

    def test_congestion_phase_files(self):
        out = self.d / "cong.json"
        p = subprocess.run(m.MPIRUN + ["-np", "4", m.CCBENCH, "congestion", "--ranks-per-host", "2", "--measured-ranks",
                                       "0,1", "--congestors", "alltoall,bcast", "--bw-bytes", "4K",
                                       "--congestor-bytes", "16K", "-n", "5", "-w", "0", "--trials", "2", "-J",
                                       str(out)], capture_output=True, text=True, timeout=300, env=m.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        files = sorted(glob.glob(str(self.d / "cong.*.*.json")))
        self.assertEqual(len(files), 4)
        for f in files:
            with self.subTest(f=os.path.basename(f)):
                self.valid(f)

    def test_screen(self):
        out = self.d / "screen"
        p = subprocess.run([m.CCBENCH, "screen", "--hosts", "localhost", "--concurrency", "1", "-e", "64K", "-n", "3",
                            "-w", "0", "--out", str(out)], capture_output=True, text=True, timeout=300, env=m.env())
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.valid(out / "screen.json", load_schema("screen.schema.json"))
        tests = sorted(glob.glob(str(out / "tests" / "*.json")))
        self.assertTrue(tests)
        for f in tests:
            with self.subTest(f=os.path.basename(f)):
                self.valid(f)


if __name__ == "__main__":
    unittest.main(verbosity=2)
