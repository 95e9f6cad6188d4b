#!/usr/bin/python3
"""Real result files from 2 and 4 ranks validate against configs/schema/result.schema.json with a
real JSON Schema validator, and carry the metadata that makes them reproducible."""
import json
import os
import socket
import subprocess
import unittest

import jsonschema

import ccbench_mpi as m


class Schema(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(m.SOURCE, "configs/schema/result.schema.json")) as f:
            cls.schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(cls.schema)

    def run_and_validate(self, np, extra=()):
        d = m.tmpdir()
        out = os.path.join(d, "r.json")
        p = m.run(np, ["-b", "8", "-e", "64K", "-f", "4", "--trials", "2", "--label", "schema-test",
                       "--instance-type", "p5en.48xlarge", "-J", out] + list(extra),
                  extra_env={"NCCL_DEBUG": "WARN", "FI_PROVIDER": "tcp"})
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = m.load(out)
        jsonschema.validate(doc, self.schema)
        row_schema = {"$schema": self.schema["$schema"], "$ref": "#/$defs/result", "$defs": self.schema["$defs"]}
        with open(out + "l") as f:
            for line in f:
                jsonschema.validate(json.loads(line), row_schema)
        return doc

    def test_two_and_four_ranks(self):
        for np in [2, 4]:
            with self.subTest(np=np):
                doc = self.run_and_validate(np)
                self.assertEqual(doc["system"]["ranks"], np)
                self.assertEqual(doc["system"]["nodes"], 1)
                self.assertEqual(doc["system"]["ranks_per_node"], np)
                self.assertEqual(doc["system"]["hosts"][0]["hostname"], socket.gethostname())
                self.assertEqual({r["trial"] for r in doc["results"]}, {0, 1})

    def test_metadata_for_reproduction(self):
        doc = self.run_and_validate(2)
        self.assertEqual(doc["tool"]["name"], "ccbench")
        # The commit the binary was built from (HEAD may have moved since the build).
        commit = doc["tool"]["git"].removesuffix("-dirty")
        if commit != "unknown":
            self.assertRegex(commit, r"^[0-9a-f]{12}$")
            known = subprocess.run(["git", "-C", m.SOURCE, "cat-file", "-e", commit + "^{commit}"])
            self.assertEqual(known.returncode, 0, f"{commit} is not a commit of this repository")
        self.assertIn("Open MPI", doc["software"]["mpi"])
        self.assertIn("libfabric", doc["software"])
        self.assertEqual(doc["environment"].get("NCCL_DEBUG"), "WARN")
        self.assertEqual(doc["environment"].get("FI_PROVIDER"), "tcp")
        self.assertEqual(doc["system"]["instance_type"], "p5en.48xlarge")
        self.assertEqual(doc["fabric"]["generation"], "v3")
        # The profile's EFA rate describes the EFA path only: on shm no link rate is recorded.
        self.assertIsNone(doc["fabric"]["link_gbps"])
        self.assertEqual(doc["fabric"]["path"], "shm")
        cfg = doc["config"]
        self.assertEqual(cfg["timing"]["method"], "ccbench")
        self.assertEqual(cfg["timing"]["aggregation"], "max")
        self.assertEqual(cfg["iters"], "auto")
        self.assertEqual(cfg["clock"], "MPI_Wtime")
        self.assertGreater(doc["run"]["peak_rss_bytes"], 0)
        self.assertEqual(doc["run"]["command"][0], "ccbench run")
        self.assertIn("--label", doc["run"]["command"])

    def test_nccl_tests_timing_mode(self):
        doc = self.run_and_validate(2, ["--timing", "nccl-tests", "-n", "5"])
        self.assertEqual(doc["config"]["timing"]["aggregation"], "mean")
        self.assertTrue(all(r["batch"] == 20 for r in doc["results"]))

    def test_info_command(self):
        for cmd in [[m.CCBENCH, "info"], m.MPIRUN + ["-np", "2", m.CCBENCH, "info"]]:
            p = subprocess.run(cmd, capture_output=True, text=True, env=m.env(), timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            info = json.loads(p.stdout)
            self.assertEqual(info["system"]["hosts"][0]["hostname"], socket.gethostname())
            self.assertIn("mpi", info["software"])
            self.assertIn("nccl", [b["name"] for b in info["backends"]])
        self.assertEqual(info["system"]["ranks"], 2)


if __name__ == "__main__":
    unittest.main()
