#!/usr/bin/python3
"""Every fabric test on shm and tcp with the data check on: zero wrong bytes, the documented row
and metadata fields, and a result file `ccbench compare` accepts."""
import os
import subprocess
import unittest

import fabric_mpi as m

ALL = "pingpong,bw,bibw,write,read"
SIZES = ["-b", "8", "-e", "64K", "-f", "64"]  # 8 B, 512 B, 32 KiB (eager and rendezvous paths)


class Correctness(unittest.TestCase):
    def run_provider(self, provider):
        out = os.path.join(m.tmpdir(), f"{provider}.json")
        r = m.run(["-p", provider, "--ops", ALL, "--window", "16", "-J", out] + SIZES + m.QUICK)
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        doc = m.load(out)
        m.validate(doc)
        self.assertEqual(doc["run"]["status"], "complete")
        self.assertEqual(doc["run"]["command"][0], "ccbench fabric")
        ops = {row["op"] for row in doc["results"]}
        self.assertEqual(ops, {"fabric_pingpong", "fabric_bw", "fabric_bibw", "fabric_write", "fabric_read"})
        self.assertEqual(len(doc["results"]), 5 * 3)
        for row in doc["results"]:
            self.assertEqual(row["backend"], "libfabric")
            self.assertEqual(row["wrong"], 0, row)
            self.assertEqual(row["ranks"], 2)
            self.assertGreater(row["time_us"]["median"], 0)
            self.assertGreaterEqual(len(row["samples_us"]), 10)
            factor = 2 if row["op"] == "fabric_bibw" else 1
            self.assertAlmostEqual(row["busbw_gbps"], factor * row["algbw_gbps"], places=9)
        fab = doc["fabric"]
        self.assertEqual(fab["path"], provider)
        self.assertTrue(fab["provider"].startswith(provider))
        for key in ("fabric_name", "domain", "provider_version", "caps", "mr_mode", "max_msg_size", "inject_size"):
            self.assertIn(key, fab)
        self.assertTrue(fab["caps"]["tagged"])
        self.assertTrue(fab["caps"]["rma"])
        self.assertEqual(fab["messages"], "tagged")
        self.assertIn("libfabric", doc["software"])
        self.assertEqual(doc["config"]["backend"], "libfabric")
        self.assertEqual(doc["config"]["fabric"]["window"], 16)
        self.assertEqual(doc["config"]["skipped"], [])
        self.assertEqual(len(m.load_rows(out + "l")), len(doc["results"]))
        return out

    def test_shm_every_op_checked(self):
        self.run_provider("shm")

    def test_tcp_every_op_checked(self):
        out = self.run_provider("tcp")
        self.assertEqual(m.load(out)["fabric"]["provider"], "tcp;ofi_rxm")

    def test_default_is_shm_on_one_host_and_compare_accepts_the_files(self):
        d = m.tmpdir()
        files = []
        for i in range(2):
            out = os.path.join(d, f"r{i}.json")
            r = m.run(["--ops", "pingpong", "-b", "8", "-e", "4K", "-f", "8", "-J", out] + m.QUICK)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(m.load(out)["fabric"]["path"], "shm")
            files.append(out)
        c = subprocess.run([m.CCBENCH, "compare", files[0], files[1], "--format", "json"], capture_output=True,
                           text=True, timeout=60)
        # Pass, regression, or inconclusive: anything but a usage or comparability failure.
        self.assertIn(c.returncode, (0, 1, 4), c.stderr + c.stdout)
        self.assertIn("fabric_pingpong", c.stdout)

    def test_corrupted_payload_exits_1(self):
        out = os.path.join(m.tmpdir(), "bad.json")
        r = m.run(["-p", "shm", "--ops", "bw", "-b", "1K", "-e", "1K", "-J", out] + m.QUICK,
                  extra_env={"CCBENCH_TEST_CORRUPT_RANK": "1"})
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("data check failed", r.stderr)
        doc = m.load(out)
        self.assertEqual(doc["run"]["exit_code"], 1)
        self.assertEqual(doc["results"][0]["wrong"], 1)

    def test_iters_trials_and_no_check(self):
        out = os.path.join(m.tmpdir(), "n.json")
        r = m.run(["-p", "shm", "--ops", "pingpong", "-b", "64", "-e", "64", "-n", "12", "--trials", "2", "-c", "0",
                   "--batch", "5", "-J", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = m.load(out)
        self.assertEqual([row["trial"] for row in doc["results"]], [0, 1])
        for row in doc["results"]:
            self.assertEqual(len(row["samples_us"]), 12)
            self.assertEqual(row["batch"], 5)
        self.assertFalse(doc["config"]["check"])


if __name__ == "__main__":
    unittest.main()
