"""`ccbench checkpoint` under a real mpirun (2-4 ranks) on a plain directory and on tmpfs mounts."""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = os.environ.get("CCBENCH_SOURCE", ".")
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
ROOT = os.geteuid() == 0


def env():
    e = dict(os.environ)
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return e


def checkpoint(np, args, timeout=120):
    return subprocess.run(MPIRUN + ["-np", str(np), CCBENCH, "checkpoint"] + args, capture_output=True, text=True,
                          timeout=timeout, env=env())


def load(path):
    with open(path) as f:
        return json.load(f)


def compare(*args):
    return subprocess.run([CCBENCH, "compare"] + list(args), capture_output=True, text=True, timeout=60)


def steps(target):
    return sorted(os.listdir(target))


class Tmpfs:
    """A tmpfs of SIZE mounted on a fresh directory (root only)."""

    def __init__(self, size, options=""):
        self.path = tempfile.mkdtemp(prefix="ccb-ckpt-tmpfs-")
        opts = f"size={size}" + ("," + options if options else "")
        subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", self.path], check=True)

    def close(self):
        subprocess.run(["umount", self.path], check=False)
        os.rmdir(self.path)


class CheckpointTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ccb-ckpt-")
        self.target = os.path.join(self.dir, "tier")
        os.mkdir(self.target)
        self.out = os.path.join(self.dir, "out.json")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_write_commit_read_rows_and_steps(self):
        p = checkpoint(2, ["--target", self.target, "--shard-bytes", "4M", "--transfer-size", "1M", "--trials", "3",
                           "--keep", "2", "--tier", "plain", "-J", self.out])
        self.assertEqual(p.returncode, 0, p.stderr)
        f = load(self.out)
        self.assertEqual(f["run"]["status"], "complete")
        ops = [(r["op"], r["trial"]) for r in f["results"]]
        self.assertEqual(ops, [(op, t) for t in range(3) for op in
                               ("checkpoint_write", "checkpoint_commit", "checkpoint_read")])
        for r in f["results"]:
            self.assertEqual(r["bytes"], 8 << 20)
            self.assertEqual(r["ranks"], 2)
            self.assertTrue(r["durable"])
            self.assertAlmostEqual(r["busbw_gbps"], r["algbw_gbps"])
            self.assertAlmostEqual(r["algbw_gbps"], r["bytes"] / r["time_us"]["median"] / 1e3, places=6)
        w = f["results"][0]
        ck = w["checkpoint"]
        self.assertAlmostEqual(ck["time_to_durable_s"], ck["ranks_s"] + ck["commit_s"], places=9)
        self.assertAlmostEqual(w["time_us"]["median"] / 1e6, ck["time_to_durable_s"], places=5)
        self.assertEqual(sorted(x["rank"] for x in ck["per_rank"]), [0, 1])
        self.assertIn(ck["slowest"]["rank"], (0, 1))
        self.assertGreaterEqual(ck["slowest"]["tail_ratio"], 1.0)
        self.assertIn(f["results"][2]["cache_drop"], ("drop_caches", "fadvise", "warm"))
        self.assertIn("filesystem", f["config"]["checkpoint"]["target"])
        self.assertEqual(f["config"]["checkpoint"]["plan"]["writers"], 2)
        # --keep 2: the two newest committed steps, each with its manifest and shards; nothing partial.
        self.assertEqual(steps(self.target), ["step-000002", "step-000003"])
        for s in steps(self.target):
            names = sorted(os.listdir(os.path.join(self.target, s)))
            self.assertEqual(names, ["ccbench-manifest.json", "rank-00000.shard", "rank-00001.shard"])
            self.assertEqual(os.path.getsize(os.path.join(self.target, s, "rank-00001.shard")), 4 << 20)
        m = load(os.path.join(self.target, "step-000003", "ccbench-manifest.json"))
        self.assertEqual((m["step"], m["trial"], m["durable"]), (3, 2, True))
        self.assertIn("# result file: " + self.out, p.stdout)
        self.assertIn("checkpoint_write", json.dumps(f["results"][0]))
        # report and prometheus read the rows with no new flags.
        for fmt in ("table", "markdown", "csv", "prometheus", "html"):
            r = subprocess.run([CCBENCH, "report", self.out, "--format", fmt], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, f"{fmt}: {r.stderr}")
            self.assertIn("checkpoint_write", r.stdout, fmt)
            if fmt == "html":  # the checkpoint chart: throughput per trial, 2 ranks' phases and the commit
                self.assertIn("checkpoint: throughput per trial", r.stdout)
                self.assertIn("out r1 write</text>", r.stdout)
                self.assertIn("out commit</text>", r.stdout)

    def test_shared_file_layout(self):
        p = checkpoint(3, ["--target", self.target, "--shard-bytes", "1M", "--transfer-size", "256K",
                           "--layout", "shared-file", "--keep", "1", "-J", self.out])
        self.assertEqual(p.returncode, 0, p.stderr)
        step = os.path.join(self.target, "step-000001")
        self.assertEqual(sorted(os.listdir(step)), ["ccbench-manifest.json", "checkpoint.bin"])
        self.assertEqual(os.path.getsize(os.path.join(step, "checkpoint.bin")), 3 << 20)

    def test_no_fsync_is_not_durable_and_compare_refuses_it(self):
        durable = os.path.join(self.dir, "durable.json")
        lie = os.path.join(self.dir, "lie.json")
        p = checkpoint(2, ["--target", self.target, "--shard-bytes", "2M", "--trials", "2", "--keep", "1",
                           "-J", durable])
        self.assertEqual(p.returncode, 0, p.stderr)
        p = checkpoint(2, ["--target", self.target, "--shard-bytes", "2M", "--trials", "2", "--keep", "1",
                           "--no-fsync", "--tier-gbps", "0.000001", "-J", lie])
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = load(lie)["results"]
        self.assertTrue(all(r["durable"] is False for r in rows))
        self.assertIn("--no-fsync", p.stdout)
        self.assertIn("not durable?", p.stdout)
        self.assertTrue(rows[0]["plausibility"].startswith("not durable? "))
        c = compare(durable, lie, "--ops", "checkpoint_write")
        self.assertEqual(c.returncode, 3, c.stdout + c.stderr)
        self.assertIn("durable", c.stdout + c.stderr)
        c = compare(durable, lie, "--ops", "checkpoint_write", "--allow-mismatch", "durable", "--min-trials", "2")
        self.assertNotEqual(c.returncode, 3, c.stdout + c.stderr)
        self.assertIn("not durable?", c.stdout + c.stderr)

    def test_tier_gbps_read_ceiling_is_its_own(self):
        # --tier-gbps W,R: reads are checked against R, not W (a write ceiling far below the reads
        # once flagged every correct read "not durable?").
        p = checkpoint(2, ["--target", self.target, "--shard-bytes", "1M", "--transfer-size", "256K",
                           "--tier-gbps", "0.000001,100000", "-J", self.out])
        self.assertEqual(p.returncode, 0, p.stderr)
        f = load(self.out)
        ck = f["config"]["checkpoint"]
        self.assertEqual(ck["write_limit"]["baseline_gbps"], 0.000001)
        self.assertEqual(ck["read_limit"]["baseline_gbps"], 100000)
        self.assertEqual(ck["read_limit"]["ceiling_gbps"], 100000)
        rows = {r["op"]: r for r in f["results"]}
        self.assertTrue((rows["checkpoint_write"].get("plausibility") or "").startswith("not durable? "))
        self.assertFalse((rows["checkpoint_read"].get("plausibility") or "").startswith("not durable?"))

    def test_corrupted_shard_on_restart_read_is_exit_1(self):
        p = checkpoint(2, ["--target", self.target, "--shard-bytes", "1M", "--transfer-size", "256K",
                           "--phases", "write", "--keep", "1"])
        self.assertEqual(p.returncode, 0, p.stderr)
        shard = os.path.join(self.target, "step-000001", "rank-00001.shard")
        with open(shard, "r+b") as f:
            f.seek(300000)
            b = f.read(1)
            f.seek(300000)
            f.write(bytes([b[0] ^ 0xFF]))
        p = checkpoint(2, ["--target", self.target, "--shard-bytes", "1M", "--transfer-size", "256K",
                           "--phases", "read", "-J", self.out])
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(f"rank 1: {shard} at offset 300000: the shard read back wrong", p.stderr)
        rows = load(self.out)["results"]
        self.assertEqual([r["op"] for r in rows], ["checkpoint_read"])
        self.assertEqual(rows[0]["wrong"], 1)

    @unittest.skipUnless(ROOT, "mounts a tmpfs")
    def test_tier_too_small_and_enospc_mid_write(self):
        fs = Tmpfs("10M")
        try:
            # Too small: 2 x 8 MiB > 10 MiB: exit 2 before anything is written.
            p = checkpoint(2, ["--target", fs.path, "--shard-bytes", "8M", "-J", self.out])
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertRegex(p.stderr, r"--target .*: 10M free, the checkpoint needs .* \(nothing written\)")
            self.assertEqual(os.listdir(fs.path), [])
            self.assertFalse(os.path.exists(self.out))
            # Trial 0 fits (8 MiB of 10), trial 1 runs out of space in the middle of its write.
            p = checkpoint(2, ["--target", fs.path, "--shard-bytes", "4M", "--trials", "3", "--keep", "3",
                               "-J", self.out])
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("trial 1 failed, its partial step", p.stderr)
            self.assertIn("No space left on device (ENOSPC)", p.stderr)
            f = load(self.out)
            self.assertEqual(f["run"]["status"], "failed")
            self.assertIn("ENOSPC", f["run"]["error"])
            self.assertEqual({r["trial"] for r in f["results"]}, {0})
            self.assertEqual(steps(fs.path), ["step-000001"])
        finally:
            fs.close()

    @unittest.skipUnless(ROOT, "mounts a tmpfs")
    def test_direct_on_tmpfs_falls_back_and_reads_are_warm(self):
        fs = Tmpfs("64M")
        try:
            p = checkpoint(2, ["--target", fs.path, "--shard-bytes", "1M", "--direct", "-J", self.out])
            self.assertEqual(p.returncode, 0, p.stderr)
            w, _, r = load(self.out)["results"]
            if w["direct"]:  # tmpfs takes O_DIRECT since Linux 6.6
                self.assertIsNone(w["checkpoint"]["direct_refused"])
                self.assertEqual(r["cache_drop"], "o_direct")
            else:
                self.assertEqual(w["checkpoint"]["direct_refused"],
                                 "the filesystem refused O_DIRECT (EINVAL): buffered I/O instead")
                self.assertEqual(r["cache_drop"], "warm")  # tmpfs pages are the data: no rung works
                self.assertIn("warm: no cache drop worked", p.stdout)
            # Buffered reads on tmpfs: no rung of the ladder works.
            p = checkpoint(2, ["--target", fs.path, "--shard-bytes", "1M", "-J", self.out])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(load(self.out)["results"][2]["cache_drop"], "warm")
            self.assertIn("warm: no cache drop worked", p.stdout)
            self.assertEqual(load(self.out)["config"]["checkpoint"]["target"]["filesystem"], "tmpfs")
        finally:
            fs.close()

    def start_long_run(self, extra):
        """A 200-trial run in its own session, returned once 3 rows are in its .jsonl stream."""
        proc = subprocess.Popen(MPIRUN + ["-np", "2", CCBENCH, "checkpoint", "--target", self.target,
                                          "--shard-bytes", "16M", "--trials", "200", "--keep", "2", "-J", self.out]
                                + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
                                start_new_session=True)
        jsonl = self.out[:-5] + ".jsonl"
        deadline = time.time() + 60
        while time.time() < deadline:
            if os.path.exists(jsonl) and sum(1 for _ in open(jsonl)) >= 3:
                break
            time.sleep(0.05)
        return proc

    def test_sigterm_of_the_launcher_keeps_finished_trials(self):
        proc = self.start_long_run([])
        os.killpg(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        f = load(self.out)
        self.assertEqual(f["run"]["status"], "interrupted", err)
        self.assertGreaterEqual(len(f["results"]), 3)
        self.assert_nothing_looks_committed_but_is_not(self.target)

    def test_sigkill_of_a_rank_leaves_no_committed_looking_step(self):
        proc = self.start_long_run(["-T", "20", "--label", "ckpt-kill"])
        sys.path.insert(0, os.path.join(SOURCE, "tests/integration/run"))
        from ccbench_mpi import rank_pids
        pids = rank_pids("ckpt-kill")
        self.assertIn(1, pids)
        os.kill(pids[1], signal.SIGKILL)
        out, err = proc.communicate(timeout=90)
        self.assertNotEqual(proc.returncode, 0)
        f = load(self.out)
        self.assertNotEqual(f["run"]["status"], "complete")
        self.assertGreaterEqual(len(f["results"]), 3)
        self.assert_nothing_looks_committed_but_is_not(self.target)

    def assert_nothing_looks_committed_but_is_not(self, target):
        for name in os.listdir(target):
            path = os.path.join(target, name)
            if name.startswith("step-"):
                m = load(os.path.join(path, "ccbench-manifest.json"))
                for s in m["shards"]:
                    self.assertEqual(os.path.getsize(os.path.join(path, "rank-%05d.shard" % s["writer"])), s["bytes"])
            else:
                self.assertRegex(name, r"^\.step-\d{6}\.partial-\d+$")


class BadInputTest(unittest.TestCase):
    """Every flag's bad values: exit 2 and one line on stderr naming the flag."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ccb-ckpt-bad-")
        cls.file = os.path.join(cls.dir, "a-file")
        open(cls.file, "w").close()
        cls.workload = os.path.join(cls.dir, "w.yaml")
        with open(cls.workload, "w") as f:
            f.write("model: {parameters: 1M, layers: 2, hidden: 64}\ndtype: bf16\nsequence_length: 16\nmicro_batch: 1\n"
                    "parallel: {ranks: 2, ranks_per_node: 2, tp: 1, pp: 1, dp: 2}\nsharding: fsdp\n"
                    "checkpoint:\n  bytes_per_parmeter: 2\n")
        cls.workload4 = os.path.join(cls.dir, "w4.yaml")
        with open(cls.workload4, "w") as f:
            f.write("model: {parameters: 1M, layers: 2, hidden: 64}\ndtype: bf16\nsequence_length: 16\nmicro_batch: 1\n"
                    "parallel: {ranks: 4, ranks_per_node: 4, tp: 1, pp: 1, dp: 4}\nsharding: fsdp\n")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def expect(self, args, message, np=2):
        p = checkpoint(np, args)
        self.assertEqual(p.returncode, 2, f"{args}: {p.stdout} {p.stderr}")
        lines = [l for l in p.stderr.splitlines() if l.startswith("ccbench checkpoint: ")]
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn(message, lines[0])
        return lines[0]

    def test_bad_flags(self):
        d = self.dir
        ok = ["--target", d, "--shard-bytes", "1M"]
        cases = [
            (["--target", d, "--shard-bytes", "1000"], "--shard-bytes: 1000 is not a positive multiple of 4K"),
            (["--target", d, "--shard-bytes", "12Q"], "--shard-bytes: "),
            (["--target", d, "--shard-bytes", "0"], "--shard-bytes: 0 is not a positive multiple of 4K"),
            (ok + ["--transfer-size", "100"], "--transfer-size: 100 is not a positive multiple of 4K"),
            (ok + ["--transfer-size", "2G"], "--transfer-size: 2G is above 1G"),
            (ok + ["--layout", "striped"], "--layout: 'striped' is not file-per-rank or shared-file"),
            (ok + ["--phases", "read,write,x"], "--phases: 'read,write,x' is not write, read or write,read"),
            (ok + ["--keep", "-1"], "--keep: -1 must not be negative"),
            (ok + ["--trials", "0"], "--trials must be at least 1"),
            (ok + ["-T", "nan"], "-T/--timeout"),
            (ok + ["--tier-gbps", "-1"], "--tier-gbps: -1 must be above 0"),
            (ok + ["--fsx-deployment", "PERSISTENT_1", "--fsx-capacity-tib", "1.2"],
             "--fsx-deployment: 'PERSISTENT_1' is not SCRATCH_2 or PERSISTENT_2"),
            (ok + ["--fsx-deployment", "PERSISTENT_2", "--fsx-throughput-per-tib", "300", "--fsx-capacity-tib", "1"],
             "--fsx-throughput-per-tib: 300 is not a tier of PERSISTENT_2 (one of 125, 250, 500, 1000)"),
            (ok + ["--fsx-deployment", "PERSISTENT_2", "--fsx-throughput-per-tib", "250"],
             "--fsx-capacity-tib: needed with --fsx-deployment"),
            (["--target", d], "--shard-bytes or --workload: give exactly one"),
            (["--target", self.file, "--shard-bytes", "1M"], f"--target {self.file}: is not a directory"),
            (["--target", d + "/missing", "--shard-bytes", "1M"], "does not exist"),
            (["--target", "gs://bucket/ckpt", "--shard-bytes", "1M"], "--target gs://bucket/ckpt: no storage engine"),
            (["--target", "s3://bucket/ckpt", "--shard-bytes", "8M", "--part-size", "4M"],
             "--part-size: 4M is outside S3's part sizes (5M to 5G"),
            (["--target", d, "--workload", self.workload],
             f"--workload: {self.workload}:8: unknown key 'checkpoint.bytes_per_parmeter'"),
            (["--target", d, "--workload", self.workload4],
             f"--workload {self.workload4}: the workload has 4 ranks (parallel.ranks) but 2 were launched"),
            (ok + ["-J", d], "-J/--json"),
            (["--target", d, "--shard-bytes", "1M", "--phases", "read"], "--phases read: no committed step under"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                self.expect(args, message)
        self.assertEqual(sorted(os.listdir(d)), ["a-file", "w.yaml", "w4.yaml"])  # nothing written

    @unittest.skipUnless(ROOT, "mounts a tmpfs")
    def test_read_only_mount(self):
        fs = Tmpfs("4M", "ro")
        try:
            self.expect(["--target", fs.path, "--shard-bytes", "1M"], f"--target {fs.path}: is on a read-only mount")
        finally:
            fs.close()

    def test_unwritable_and_unreachable_targets(self):
        """--target a directory this user cannot write (or cannot reach): exit 2, one line naming it.

        As root the whole launch runs as nobody: mpirun too, not only the rank. A rank that drops
        its uid under root's mpirun (mpirun ... setpriv ccbench) cannot attach to the launcher's
        PMIx session directory (root's, mode 0700): its MPI_Init aborts and Open MPI 4.1's mpirun
        then waits forever for it. That was the hang, in the launcher, never in ccbench. The
        executables are copied where nobody can run them (a checkout may be under /root)."""
        base = tempfile.mkdtemp(prefix="ccb-ckpt-nobody-")
        try:
            os.chmod(base, 0o755)
            locked = os.path.join(base, "locked")
            os.mkdir(locked, 0o555)
            os.chmod(locked, 0o555)
            hidden = os.path.join(base, "hidden")
            os.mkdir(hidden, 0o700)
            os.mkdir(os.path.join(hidden, "tier"))
            prefix, ccbench = [], CCBENCH
            if ROOT:
                if shutil.which("setpriv") is None:
                    self.skipTest("root writes anywhere and setpriv (util-linux) is missing")
                bindir = os.path.join(base, "bin")
                os.mkdir(bindir, 0o755)
                for exe in ("ccbench", "ccbench-measure"):
                    shutil.copy2(os.path.join(os.path.dirname(os.path.abspath(CCBENCH)), exe), bindir)
                ccbench = os.path.join(bindir, "ccbench")
                prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
            e = env()
            e["HOME"] = base  # Open MPI looks for $HOME/.openmpi; root's home is not nobody's
            e.pop("CCBENCH_MEASURE", None)
            for target, message in [(locked, f"--target {locked}: is not writable by this user"),
                                    (os.path.join(hidden, "tier"),
                                     f"--target {hidden}/tier: cannot be reached: Permission denied (EACCES)")]:
                with self.subTest(target=target):
                    p = subprocess.run(prefix + MPIRUN + ["-np", "2", ccbench, "checkpoint", "--target", target,
                                                          "--shard-bytes", "1M"],
                                       capture_output=True, text=True, timeout=60, env=e)
                    self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                    lines = [l for l in p.stderr.splitlines() if l.startswith("ccbench checkpoint: ")]
                    self.assertEqual(lines, ["ccbench checkpoint: " + message], p.stderr)
            self.assertEqual(os.listdir(locked), [])
        finally:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
