#!/usr/bin/python3
"""`ccbench run --matrix FILE.csv` and `--moe SPEC` under a real mpirun (3 and 2 ranks): the rows'
sizes, imbalance, off-rank busbw and bound against hand-computed values, the data check (a
corrupted element is exit 1), the source recorded, and the usage errors (exit 2) naming the file,
line and column or the flag."""
import hashlib
import json
import os
import unittest

import jsonschema

import ccbench_mpi as m

# Row = sender, bytes of float. Sent: 24, 20, 40; received: 44, 20, 20; total 84 (12 on the
# diagonal). S = 84 / 3 = 28 bytes (7 floats); the mean off-rank bytes a rank sends: 72 / 3 = 24.
# Most loaded: rank 0, 44 bytes received (all off-rank): imbalance 44 / 28.
THREE = "0,8,16\n4,12,4\n40,0,0\n"


class Matrix(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(m.SOURCE, "configs/schema/result.schema.json")) as f:
            cls.schema = json.load(f)

    def setUp(self):
        self.dir = m.tmpdir()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def usage(self, np, args, message):
        p = m.run(np, args, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(message, p.stderr)

    def test_matrix_row_by_hand(self):
        path = self.write("three.csv", THREE)
        out = os.path.join(self.dir, "r.json")
        p = m.run(3, ["--matrix", path, "-n", "5", "--in-place", "no", "--link-gbps", "100", "-J", out], timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = m.load(out)
        jsonschema.validate(doc, self.schema)
        self.assertEqual(doc["config"]["matrix"], path)
        [row] = doc["results"]
        self.assertEqual((row["op"], row["bytes"], row["count"], row["ranks"], row["wrong"]), ("alltoallv", 28, 7, 3, 0))
        mx = row["matrix"]
        self.assertEqual(mx["source"], {"file": path, "sha256": hashlib.sha256(THREE.encode()).hexdigest()})
        self.assertAlmostEqual(mx["imbalance"], 44 / 28, places=12)
        self.assertEqual((mx["total_bytes"], mx["off_rank_bytes"], mx["most_loaded_rank"], mx["most_loaded_bytes"]),
                         (84, 72, 0, 44))
        self.assertEqual(mx["most_loaded_off_rank_bytes"], 44)
        median = row["time_us"]["median"]
        self.assertAlmostEqual(row["busbw_gbps"], 24 / (median * 1e-6) / 1e9, delta=1e-9 * row["busbw_gbps"])
        self.assertAlmostEqual(row["algbw_gbps"], 28 / (median * 1e-6) / 1e9, delta=1e-9 * row["algbw_gbps"])
        self.assertAlmostEqual(mx["bound_us"], 44 * 8 / 100e3, places=15)  # 44 bytes at 100 Gbit/s

    def test_moe_rows(self):
        out = os.path.join(self.dir, "moe.json")
        # 4 experts on 2 ranks, top-2 of 64 tokens, 16 floats each: every rank sends 64 x 2 x 16 x 4
        # = 8192 bytes; the pair moves dispatch and combine, 16384.
        # --in-place both (the default): the matrix ops' only variant, out of place, nothing skipped.
        p = m.run(2, ["--moe", "4,2,64,16,hot:1:0.7", "--seed", "5", "-n", "5", "-J", out], timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("skipped", p.stderr)
        doc = m.load(out)
        jsonschema.validate(doc, self.schema)
        rows = {r["op"]: r for r in doc["results"]}
        self.assertEqual(sorted(rows), ["moe_combine", "moe_dispatch", "moe_pair"])
        self.assertEqual([rows[o]["bytes"] for o in ("moe_dispatch", "moe_combine", "moe_pair")], [8192, 8192, 16384])
        self.assertEqual([r["wrong"] for r in doc["results"]], [0, 0, 0])
        src = rows["moe_dispatch"]["matrix"]["source"]
        self.assertEqual((src["moe"], src["routing"], src["seed"]), ("4,2,64,16,hot:1:0.7", "hot", 5))
        # The combine is the transpose: the same load, so the same imbalance.
        self.assertEqual(rows["moe_dispatch"]["matrix"]["imbalance"], rows["moe_combine"]["matrix"]["imbalance"])
        self.assertEqual(rows["moe_pair"]["matrix"]["total_bytes"], 2 * rows["moe_dispatch"]["matrix"]["total_bytes"])

    def test_a_wrong_element_is_exit_1(self):
        path = self.write("three.csv", THREE)
        p = m.run(3, ["--matrix", path, "-n", "3", "--in-place", "no"], timeout=60,
                  extra_env={"CCBENCH_TEST_CORRUPT_RANK": "1"})
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("data check failed: 1 wrong elements", p.stderr)

    def test_usage_errors(self):
        bad = self.write("bad.csv", "0,8,16\n4,x,4\n40,0,0\n")
        self.usage(3, ["--matrix", bad], bad + ":2:2: 'x' is not a byte count")
        three = self.write("three.csv", THREE)
        self.usage(2, ["--matrix", three], three + ":1:3: more than 2 columns")
        self.usage(2, ["--moe", "3,1,8,4"], "--moe '3,1,8,4': 3 experts do not place evenly on the job's 2 ranks")
        self.usage(2, ["--ops", "alltoallv"], "--ops alltoallv needs --matrix FILE.csv")
        self.usage(2, ["--moe", "4,1,8,4", "--in-place", "yes"],
                   "moe_dispatch in-place: moe_dispatch runs out of place only")
        self.usage(2, ["--moe", "4,1,8,4", "-e", "1M"], "-e/--max-bytes: the matrix ops (moe_dispatch, moe_combine, "
                                                        "moe_pair) take their sizes from --matrix / --moe")


if __name__ == "__main__":
    unittest.main()
