#!/usr/bin/python3
"""Issue 27 items 4, 12, 13 and 14: numbers that overflowed, contradicted themselves or meant nothing,
in `ccbench checkpoint` (real mpirun, 2 ranks), `ccbench model checkpoint` and `ccbench compare`.

- --shard-bytes whose per-rank or total bytes do not fit (2^63 wrapped to 0 x 2 ranks, passed the
  free-space check and wrote until -T): exit 2 naming the flag, nothing written in the target; the
  free-space error's "needs" figure is the exact sum;
- model checkpoint on a --no-fsync file (priced as durable before), on a file whose busbw_gbps was
  edited x100, on one whose system.nodes is 2^31 (reported "missing"); rows flagged "not durable?"
  are a warning;
- compare on checkpoint files leaves the checkpoint_commit rows (a time, not a bandwidth) out of a
  claim unless its ops name them (a 1.5x tier pair read 2.95x with them);
- model checkpoint's number flags and errors: 1e308 and -1 for --node-mtbf-hours, an overflowing
  expected wall time, a workload count above 2^30, capacity "0 TiB" for an S3 tier.
"""
import copy
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = Path(os.environ.get("CCBENCH_SOURCE", "."))
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
MEASURED = SOURCE / "tests/data/checkpoint/posix-2ranks-3trials.json"  # a real 2-rank run, 3 trials
WORKLOAD = SOURCE / "configs/workloads/llama3-70b-mlperf-storage.yaml"


def env():
    e = dict(os.environ)
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return e


def checkpoint(np, args, timeout=120):
    return subprocess.run(MPIRUN + ["-np", str(np), CCBENCH, "checkpoint"] + args, capture_output=True, text=True,
                          timeout=timeout, env=env())


def ccbench(*args, timeout=60):
    return subprocess.run([CCBENCH] + [str(a) for a in args], capture_output=True, text=True, timeout=timeout)


def model_checkpoint(*args):
    return ccbench("model", "checkpoint", "--workload", WORKLOAD, "--nodes", "8", *args)


def load(path):
    with open(path) as f:
        return json.load(f)


def save(doc, path):
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


class Temp(unittest.TestCase):
    def setUp(self):
        self.d = Path(tempfile.mkdtemp(prefix="ccbench-hostile-ckpt-"))

    def tearDown(self):
        shutil.rmtree(self.d, ignore_errors=True)

    def one_line(self, p, code, text):
        """Exit `code`, and stderr one line that holds `text`."""
        self.assertEqual(p.returncode, code, p.stdout + p.stderr)
        self.assertIn(text, p.stderr)
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)


class ShardBytes(Temp):
    """Item 4 under mpirun: every size whose bytes do not fit is exit 2 before anything is written."""

    def refused(self, shard, message, np=2):
        target = self.d / "tier"
        target.mkdir(exist_ok=True)
        # -T 20 and the timeout bound the run if the size were taken (before the fix it wrote until -T).
        p = checkpoint(np, ["--target", str(target), "--shard-bytes", shard, "--phases", "write", "-T", "20",
                            "-J", str(self.d / "r.json")], timeout=60)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(message, p.stderr)
        self.assertEqual(os.listdir(target), [], "the target was written to")
        self.assertFalse((self.d / "r.json").exists())

    def test_two_to_the_63_is_refused_by_the_flag(self):
        # 8388608T = 2^63: the header said "= 0" and 2 ranks wrote into .step-*.partial until -T.
        self.refused("8388608T", "--shard-bytes: 8388608T is above the largest file size (2^63-1 bytes)")
        self.refused("9223372036854775808", "--shard-bytes: 9223372036854775808 is above the largest file size")

    def test_just_below_two_to_the_64_is_refused(self):
        self.refused("18446744073709547520", "--shard-bytes: 18446744073709547520 is above the largest file size", np=1)
        self.refused("18446744073709551616", "--shard-bytes: size '18446744073709551616' is too large")

    def test_total_above_two_to_the_62_is_refused(self):
        # Each shard fits, their sum over the ranks does not.
        self.refused("4611686018427387904", "--shard-bytes: 4611686018427387904 bytes x 2 ranks is above the largest "
                                            "checkpoint, 2^62 bytes (4 EiB)")

    def test_free_space_figure_is_the_exact_sum(self):
        # 64 TiB a rank on 2 ranks: needs 128 TiB + 1% + 1 MiB, computed without wrapping.
        need = 2 * (64 << 40)
        need += need // 100 + (1 << 20)
        target = self.d / "tier"
        target.mkdir()
        p = checkpoint(2, ["--target", str(target), "--shard-bytes", "64T", "--phases", "write", "-T", "20"], timeout=60)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertRegex(p.stderr, rf"--target {target}: \S+ free, the checkpoint needs {need} \(nothing written\)")
        self.assertEqual(os.listdir(target), [])


class MeasuredTier(Temp):
    """Item 12 (and 14's system.nodes): what a measured file must be before it prices a tier."""

    def price(self, path):
        return model_checkpoint("--node-mtbf-hours", "6000", "--config", f"p5en@measured:{path}", "--format", "json")

    def edited(self, change):
        doc = load(MEASURED)
        change(doc)
        return save(doc, self.d / "edited.json")

    def test_the_real_file_prices(self):
        p = self.price(MEASURED)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        self.assertEqual(json.loads(p.stdout)["configs"][0]["warnings"], [])

    def test_no_fsync_rows_are_refused(self):
        # A real --no-fsync run: its rows say durable false, which was priced as a time to durable.
        out = self.d / "nofsync.json"
        p = checkpoint(2, ["--target", str(self.d), "--shard-bytes", "1M", "--trials", "2", "--phases", "write",
                           "--no-fsync", "-J", str(out)])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.one_line(self.price(out), 2, f"{out}: results[0] (checkpoint_write trial 0): durable is false "
                                          "(written with --no-fsync): not a time to durable")

    def test_busbw_that_contradicts_bytes_and_time_is_refused(self):
        def x100(doc):
            for r in doc["results"]:
                r["busbw_gbps"] *= 100
                r["algbw_gbps"] *= 100
        path = self.edited(x100)
        p = self.price(path)
        self.one_line(p, 2, f"{path}: results[0] (checkpoint_write trial 0): busbw_gbps ")
        self.assertIn("contradicts bytes / time_us.median = 0.50967 GB/s", p.stderr)

    def test_flagged_rows_are_a_warning(self):
        def flag(doc):
            doc["results"][0]["plausibility"] = "not durable? 0.51 GB/s is above the tier's 0.1 GB/s"
        path = self.edited(flag)
        p = self.price(path)
        self.assertEqual(p.returncode, 0, p.stderr)
        warning = f"{path}: 1 row(s) flagged, e.g. checkpoint_write trial 0: not durable? 0.51 GB/s"
        self.assertIn(f"ccbench model checkpoint: warning: --config p5en@measured:{path}: {warning}", p.stderr)
        self.assertIn(warning, json.loads(p.stdout)["configs"][0]["warnings"][0])

    def test_nodes_out_of_range_are_named(self):
        for nodes in [2 ** 31, 0, 2 ** 64 - 1, -3]:
            path = self.edited(lambda doc: doc["system"].update(nodes=nodes))
            self.one_line(self.price(path), 2,
                          f"{path}: system.nodes: {nodes} is not a node count (a whole number 1 to 16777216)")
        path = self.edited(lambda doc: doc["system"].pop("nodes"))
        self.one_line(self.price(path), 2, f"{path}: system.nodes: missing")


class CommitRowsInACompare(Temp):
    """Item 13: checkpoint_commit rows are not pooled into a throughput claim."""

    def sides(self):
        base = load(MEASURED)
        cand = copy.deepcopy(base)
        for r in cand["results"]:
            # The candidate tier is exactly 1.5x as fast; its commits 10x (a commit is metadata).
            by = 10.0 if r["op"] == "checkpoint_commit" else 1.5
            r["samples_us"] = [s / by for s in r["samples_us"]]
            r["time_us"] = {k: (v / by if not isinstance(v, list) else [x / by for x in v])
                            for k, v in r["time_us"].items()}
            r["busbw_gbps"] *= by
            r["algbw_gbps"] *= by
        claim = self.d / "claim.yaml"
        claim.write_text("statement: \"the candidate tier checkpoints 50% faster\"\nmetric: busbw\n"
                         "expected_speedup: 50%\ntolerance: 15%\nstatistic: geomean\n")
        return save(base, self.d / "base.json"), save(cand, self.d / "cand.json"), claim

    def test_a_claim_without_ops_leaves_commits_out(self):
        base, cand, claim = self.sides()
        p = ccbench("compare", base, cand, "--claim", claim, "--format", "json", "--min-trials", "3")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)  # confirmed: 1.5x on writes and reads
        j = json.loads(p.stdout)
        self.assertEqual(sorted({r["op"] for r in j["rows"]}), ["checkpoint_read", "checkpoint_write"])
        self.assertIn("left out 6 checkpoint_commit row(s): a commit carries a time, not a bandwidth "
                      "(--ops checkpoint_commit compares them alone)", j["warnings"])

    def test_commits_compare_when_asked_for(self):
        base, cand, _ = self.sides()
        p = ccbench("compare", base, cand, "--ops", "checkpoint_commit", "--format", "json", "--min-trials", "3")
        self.assertIn(p.returncode, (0, 1, 4), p.stdout + p.stderr)
        j = json.loads(p.stdout)
        self.assertEqual({r["op"] for r in j["rows"]}, {"checkpoint_commit"})
        self.assertFalse(any("left out" in w for w in j["warnings"]))


class ModelCheckpointNumbers(Temp):
    """Item 14: every error names the flag or the file and field, exit 2."""

    def test_mtbf_out_of_range(self):
        for value in ["1e308", "-1", "0"]:
            self.one_line(model_checkpoint("--node-mtbf-hours", value, "--config", "p5en@s3"), 2,
                          f"--node-mtbf-hours: {value} is out of range (must be above 0 and at most 1e+09)")
        self.one_line(model_checkpoint("--node-mtbf-hours", "6000", "--restart-s", "1e300", "--config", "p5en@s3"), 2,
                      "--restart-s: 1e300 is out of range (must be at least 0 and at most 1e+09)")
        self.one_line(model_checkpoint("--node-mtbf-hours", "6000", "--async-gbps-per-node", "1e308", "--config",
                                       "p5en@s3"), 2,
                      "--async-gbps-per-node: 1e308 is out of range (must be above 0 and at most 1e+06)")

    def test_an_overflowing_wall_time_names_its_inputs(self):
        # A job MTBF of 4.5 ms against a checkpoint of seconds: e^((tau + delta) / M) overflows.
        p = model_checkpoint("--node-mtbf-hours", "0.00001", "--config", "p5en@s3")  # --nodes 8
        self.one_line(p, 2, "--config p5en@s3: the expected wall time overflows: the job never finishes a segment "
                            "(--node-mtbf-hours 1e-05 over --nodes 8: a job MTBF of 0.0045 s; --restart-s 0)")

    def test_workload_count_above_two_to_the_30(self):
        text = WORKLOAD.read_text().replace("ranks: 64", "ranks: 2147483648", 1)
        self.assertIn("ranks: 2147483648", text)
        path = self.d / "w.yaml"
        path.write_text(text)
        p = ccbench("model", "checkpoint", "--workload", path, "--nodes", "8", "--node-mtbf-hours", "6000",
                    "--config", "p5en@s3")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertRegex(p.stderr, rf"^ccbench model checkpoint: {path}:\d+: parallel.ranks: 2147483648 is above 2\^30 "
                                   r"\(1073741824\)\n$")

    def test_an_s3_tier_has_no_capacity(self):
        args = ["--node-mtbf-hours", "6000", "--config", "p5en@fsx:PERSISTENT_2-250:10", "--config", "p5en@s3"]
        p = model_checkpoint(*args)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(", capacity 10 TiB -> none (not an FSx tier)\n", p.stdout)
        p = model_checkpoint(*args, "--format", "json")
        self.assertEqual(json.loads(p.stdout)["delta"]["capacity_tib"], [10, None])


if __name__ == "__main__":
    unittest.main()
