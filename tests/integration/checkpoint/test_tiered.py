"""`ccbench checkpoint --tiered LOCAL_PATH` under a real mpirun (2 ranks) on plain directories: the
rows' blocking_us and durable_us, the drained shards read back and verified, the local tier left
empty, the result file valid against configs/schema/result.schema.json, and bad --tiered values
(exit 2, one line naming the flag, nothing written). Timing against known rates:
tests/e2e/storage/checkpoint.sh tiered."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = os.environ.get("CCBENCH_SOURCE", ".")
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]


def load(path):
    with open(path) as f:
        return json.load(f)


def checkpoint(args, timeout=120, launch=True):
    """2 ranks under mpirun; launch=False: one rank started alone (MPI's singleton), for refusals
    that every rank makes alike, so each case costs no launcher start-up."""
    e = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = (MPIRUN + ["-np", "2"] if launch else []) + [CCBENCH, "checkpoint"] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)


class Tiered(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ccb-tiered-")
        self.target = os.path.join(self.tmp, "target")
        self.local = os.path.join(self.tmp, "local")
        os.mkdir(self.target)
        os.mkdir(self.local)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_rows_and_drained_shards(self):
        out = os.path.join(self.tmp, "t.json")
        r = checkpoint(["--target", self.target, "--tiered", self.local, "--shard-bytes", "4M", "--trials", "2",
                        "--transfer-size", "1M", "--keep", "2", "-J", out])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("tiered: blocking", r.stdout)
        doc = load(out)
        self.assertEqual(doc["config"]["checkpoint"]["tiered"], self.local)
        writes = [x for x in doc["results"] if x["op"] == "checkpoint_write"]
        reads = [x for x in doc["results"] if x["op"] == "checkpoint_read"]
        self.assertEqual(len(writes), 2)
        self.assertEqual(len(reads), 2)
        for w in writes:
            c = w["checkpoint"]
            self.assertGreater(w["blocking_us"], 0)
            self.assertLess(w["blocking_us"], w["durable_us"])
            self.assertAlmostEqual(w["durable_us"], c["time_to_durable_s"] * 1e6, delta=1e-3)
            self.assertAlmostEqual(w["blocking_us"], c["tiered"]["blocking_s"] * 1e6, delta=1e-3)
            ends = {p["rank"]: p["local_end_s"] for p in c["tiered"]["per_rank"]}
            self.assertEqual(sorted(ends), [0, 1])
            starts = [p["start_s"] for p in c["per_rank"]]
            self.assertAlmostEqual(w["blocking_us"] / 1e6, max(ends.values()) - min(starts), delta=1e-6)
            # Every rank's local copy was done before its drain ended.
            for p in c["per_rank"]:
                self.assertLess(ends[p["rank"]], p["end_s"])
        for rd in reads:
            self.assertEqual(rd["wrong"], 0)  # the drained shards read back and verified
        self.assertEqual(os.listdir(self.local), [])  # drained: nothing left on the local tier
        self.assertEqual(sorted(os.listdir(self.target)), ["step-000001", "step-000002"])
        try:
            import jsonschema
        except ImportError:
            self.skipTest("python3-jsonschema missing")
        jsonschema.validate(doc, load(os.path.join(SOURCE, "configs/schema/result.schema.json")))

    def test_bad_tiered(self):
        out = os.path.join(self.tmp, "bad.json")
        base = ["--target", self.target, "--shard-bytes", "1M", "-J", out]
        cases = [
            (["--tiered", os.path.join(self.tmp, "missing")], f"--tiered {self.tmp}/missing: does not exist"),
            (["--tiered", "/proc/self"], "--tiered /proc/self: is not writable"),
            (["--tiered", self.target], f"--tiered {self.target}: is the --target directory"),
            (["--tiered", os.path.join(self.target, "..", "target")], "is the --target directory"),
            (["--tiered", ""], "--tiered: empty path"),
            (["--tiered", "s3://bucket/ckpt"], "--tiered s3://bucket/ckpt: the local tier is a local directory"),
            (["--tiered", self.local, "--phases", "read"], "--tiered: needs the write phase"),
            (["--tiered", self.local, "--layout", "shared-file"], "--tiered: needs --layout file-per-rank"),
        ]
        for i, (extra, needle) in enumerate(cases):
            with self.subTest(extra=extra):
                r = checkpoint(base + extra, launch=i < 3)  # the first under mpirun: the ranks agree
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                lines = [x for x in r.stderr.splitlines() if x.startswith("ccbench checkpoint:")]
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertIn(needle, lines[0])
                self.assertEqual(os.listdir(self.target), [])
                self.assertEqual(os.listdir(self.local), [])
                self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
