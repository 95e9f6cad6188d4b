#!/usr/bin/python3
"""Issue 27 through `ccbench checkpoint` under a real mpirun (1-2 ranks, 1 MiB shards): step folders.

- item 1: --keep removes only steps whose manifest ccbench wrote, and in them only the files the
  manifest lists: a user's step-000100/ holding `{}` as ccbench-manifest.json and model.pt stays;
  a user's file inside a ccbench step stays (the folder is kept and said so);
- item 5: a killed --tiered run's local copies (.ccbench-tier-PID) are named by the next run and
  left alone; a local tier too small for the local copies is exit 2 before anything is written; a
  local tier inside --target is exit 2;
- item 10: a FIFO as the manifest is exit 2 naming it, not a blocked --phases read;
- item 11: trial 1e300, -7 and 0.5 in a manifest are exit 2 naming the field, not exit 1;
- item 14a: a user's step-999999999 is not a step (the run numbers from step-000001 and leaves it);
  a step-999999 leaves no number and is exit 2; a hang's message numbers the trial as the table does;
- item 18: without --keep a run removes the steps it wrote at its end (only those), and a run
  stopped by SIGTERM removes nothing.
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
SMALL = ["--shard-bytes", "1M", "--transfer-size", "256K"]
MANIFEST = "ccbench-manifest.json"


def env():
    e = dict(os.environ)
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return e


def checkpoint(np, args, timeout=60):
    """mpirun ccbench checkpoint in its own session; on a timeout the whole session is killed and
    the result says so (returncode None), so a hang fails the test instead of stalling it."""
    proc = subprocess.Popen(MPIRUN + ["-np", str(np), CCBENCH, "checkpoint"] + args, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env(), start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return subprocess.CompletedProcess(proc.args, None, out, f"TIMED OUT after {timeout} s\n{err}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def errors(p):
    return [line for line in p.stderr.splitlines() if line.startswith("ccbench checkpoint: ")]


def line_count(path):
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return sum(1 for _ in f)


def tree(path):
    """Every file under path with its content: what 'untouched' is checked against."""
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            full = os.path.join(root, f)
            if os.path.isfile(full) and not os.path.islink(full):
                with open(full, "rb") as fh:
                    out[os.path.relpath(full, path)] = fh.read()
    return out


class Steps(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ccb-hostile-steps-")
        self.target = os.path.join(self.dir, "target")
        os.mkdir(self.target)
        self.out = os.path.join(self.dir, "out.json")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def user_folder(self, name):
        """A user's folder that looks like a step: `{}` as its manifest and a model file."""
        d = os.path.join(self.target, name)
        os.mkdir(d)
        with open(os.path.join(d, MANIFEST), "w") as f:
            f.write("{}")
        with open(os.path.join(d, "model.pt"), "wb") as f:
            f.write(b"the user's weights")
        return d

    def write_step(self, np=2):
        """One committed step of ccbench's own (kept), its manifest path returned."""
        p = checkpoint(np, ["--target", self.target, *SMALL, "--phases", "write", "--keep", "1"])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        steps = sorted(n for n in os.listdir(self.target) if os.path.exists(os.path.join(self.target, n, MANIFEST)))
        return os.path.join(self.target, steps[-1], MANIFEST)

    # item 1
    def test_keep_never_touches_a_users_folder_or_files(self):
        user = self.user_folder("step-000100")
        before = tree(user)
        p = checkpoint(2, ["--target", self.target, *SMALL, "--phases", "write", "--trials", "2", "--keep", "1"])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(tree(user), before)
        self.assertEqual(sorted(os.listdir(self.target)), ["step-000100", "step-000102"])
        # A user's file put inside a ccbench step: the step's own files go, the user's file stays.
        notes = os.path.join(self.target, "step-000102", "notes.txt")
        with open(notes, "w") as f:
            f.write("mine")
        p = checkpoint(2, ["--target", self.target, *SMALL, "--phases", "write", "--keep", "1"])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"# note: kept {self.target}/step-000102: it holds files its manifest does not list",
                      p.stdout)
        self.assertEqual(os.listdir(os.path.join(self.target, "step-000102")), ["notes.txt"])
        self.assertEqual(tree(user), before)
        self.assertEqual(sorted(os.listdir(self.target)), ["step-000100", "step-000102", "step-000103"])

    # item 18
    def test_without_keep_a_run_removes_only_its_own_steps(self):
        user = self.user_folder("step-000050")
        earlier = self.write_step()  # step-000051, an earlier run's
        stale = os.path.join(self.target, ".step-000049.partial-777")  # a killed run's: named, left
        os.mkdir(stale)
        with open(os.path.join(stale, "rank-00000.shard"), "wb") as f:
            f.write(b"half")
        before = tree(self.target)
        p = checkpoint(2, ["--target", self.target, *SMALL, "--trials", "3", "-J", self.out])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"# note: {stale} is an uncommitted step of an earlier run (never a checkpoint; remove it)",
                      p.stdout)
        self.assertIn("# removed step-000052, step-000053, step-000054 (this run's steps; --keep N keeps the newest N)",
                      p.stdout)
        self.assertEqual(sorted(os.listdir(self.target)), [".step-000049.partial-777", "step-000050", "step-000051"])
        self.assertEqual(tree(self.target), before)
        self.assertTrue(os.path.exists(earlier) and os.path.isdir(user))
        with open(self.out) as f:
            rows = json.load(f)["results"]
        self.assertEqual(len(rows), 9)  # every trial's write, commit and read kept in the result file
        self.assertEqual({r["backend"] for r in rows}, {"posix"})  # the engine's name

    # item 18: an interrupted run does not delete (its own steps stay, nothing else is touched)
    def test_sigterm_removes_nothing(self):
        self.user_folder("step-000001")
        before = tree(self.target)
        proc = subprocess.Popen(MPIRUN + ["-np", "2", CCBENCH, "checkpoint", "--target", self.target, *SMALL,
                                          "--trials", "100000", "-J", self.out], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env(), start_new_session=True)
        try:
            jsonl = self.out[:-5] + ".jsonl"
            deadline = time.time() + 60
            while time.time() < deadline and line_count(jsonl) < 4:
                time.sleep(0.05)
            os.killpg(proc.pid, signal.SIGTERM)
            proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
        after = tree(self.target)
        for name, content in before.items():
            self.assertEqual(after.get(name), content, name)
        committed = [n for n in os.listdir(self.target) if n != "step-000001" and not n.startswith(".step-")]
        self.assertGreaterEqual(len(committed), 1)  # its own steps stay: nothing removed on a signal

    # item 5
    def test_stale_tier_copies_are_named_and_left(self):
        local = os.path.join(self.dir, "local")
        stale = os.path.join(local, ".ccbench-tier-99999")
        os.makedirs(stale)
        with open(os.path.join(stale, "rank-00001.shard"), "wb") as f:
            f.write(b"\0" * 8192)
        p = checkpoint(2, ["--target", self.target, "--tiered", local, *SMALL])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"# note: {stale} holds 1 file(s), 8K: local copies of an earlier --tiered run that never "
                      "drained (remove it)", p.stdout)
        self.assertEqual(os.listdir(local), [".ccbench-tier-99999"])
        self.assertEqual(os.listdir(stale), ["rank-00001.shard"])

    def test_tier_inside_the_target_is_refused(self):
        inside = os.path.join(self.target, "step-000001")
        os.mkdir(inside)
        with open(os.path.join(inside, "keepme"), "w") as f:
            f.write("x")
        p = checkpoint(2, ["--target", self.target, "--tiered", inside, *SMALL, "--keep", "1", "-J", self.out])
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(errors(p), [f"ccbench checkpoint: --tiered {inside}: is inside the --target directory "
                                     f"{self.target}; the local tier must be outside it"])
        self.assertEqual(os.listdir(self.target), ["step-000001"])
        self.assertEqual(os.listdir(inside), ["keepme"])
        self.assertFalse(os.path.exists(self.out))

    @unittest.skipUnless(os.geteuid() == 0, "mounts a tmpfs")
    def test_tier_too_small_is_refused_before_writing(self):
        local = tempfile.mkdtemp(prefix="ccb-hostile-tier-")
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", local], check=True, timeout=30)
        try:
            p = checkpoint(2, ["--target", self.target, "--tiered", local, *SMALL, "-J", self.out])
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            lines = errors(p)
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertRegex(lines[0], rf"^ccbench checkpoint: --tiered {local}: 1M free, the local copies need "
                                       r"\S+ \(nothing written\)$")
            self.assertEqual(os.listdir(local), [])
            self.assertEqual(os.listdir(self.target), [])
            self.assertFalse(os.path.exists(self.out))
        finally:
            subprocess.run(["umount", local], check=False, timeout=30)
            os.rmdir(local)

    # item 10
    def test_fifo_manifest_is_exit_2_not_a_hang(self):
        manifest = self.write_step()
        os.remove(manifest)
        os.mkfifo(manifest)
        p = checkpoint(2, ["--target", self.target, *SMALL, "--phases", "read", "-J", self.out], timeout=30)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        lines = errors(p)
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertTrue(lines[0].startswith(f"ccbench checkpoint: --phases read: {manifest}: "), lines[0])
        self.assertIn("FIFO", lines[0])
        self.assertFalse(os.path.exists(self.out))

    # item 11
    def test_manifest_numbers_out_of_range_name_the_field(self):
        manifest = self.write_step()
        with open(manifest) as f:
            good = f.read()
        for value in ("1e300", "-7", "0.5"):
            with self.subTest(trial=value):
                text = good.replace('"trial": 0', f'"trial": {value}')
                self.assertNotEqual(text, good)
                with open(manifest, "w") as f:
                    f.write(text)
                p = checkpoint(2, ["--target", self.target, *SMALL, "--phases", "read", "-J", self.out])
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                lines = errors(p)
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertIn(f"--phases read: {manifest}: field 'trial': ", lines[0])
                self.assertIn("is not a whole number from 0 to 99999", lines[0])
                self.assertNotIn("read back wrong", p.stderr)
                self.assertFalse(os.path.exists(self.out))

    # item 14a
    def test_a_users_step_999999999_is_not_a_step(self):
        user = self.user_folder("step-999999999")
        before = tree(user)
        p = checkpoint(2, ["--target", self.target, *SMALL, "--phases", "write", "--trials", "2", "--keep", "2"])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(sorted(os.listdir(self.target)), ["step-000001", "step-000002", "step-999999999"])
        self.assertEqual(tree(user), before)

    def test_no_step_number_left_is_exit_2(self):
        os.mkdir(os.path.join(self.target, "step-999999"))
        p = checkpoint(1, ["--target", self.target, *SMALL, "-J", self.out])
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(errors(p), [f"ccbench checkpoint: --target {self.target}: step-999999 is the highest step and "
                                     "step numbers end at step-999999: no room for 1 trial(s) (remove or rename the "
                                     "old steps)"])
        self.assertEqual(os.listdir(self.target), ["step-999999"])
        self.assertFalse(os.path.exists(self.out))

    def test_hang_message_numbers_the_trial_as_the_table(self):
        # A FIFO in place of rank 1's shard blocks its open: the watchdog ends the run at -T.
        manifest = self.write_step()
        shard = os.path.join(os.path.dirname(manifest), "rank-00001.shard")
        os.remove(shard)
        os.mkfifo(shard)
        p = checkpoint(2, ["--target", self.target, *SMALL, "--phases", "read", "-T", "2", "-J", self.out])
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("checkpoint_read of 2097152 bytes, out-of-place, trial 0,", p.stderr)
        self.assertNotIn("trial 1,", p.stderr)


if __name__ == "__main__":
    unittest.main()
