#!/usr/bin/python3
"""Issue 23 through `ccbench run` under a real mpirun (2 ranks): what happens to -J.

- a missing folder is created with one line each, but one directly under / is refused (exit 2,
  nothing created);
- a second run on the same -J is refused (exit 2) while the first holds the stream's lock, and the
  first's stream stays one parseable row a line;
- the -J folder removed mid-run: re-created, said so, every row kept, exit 0;
- a -J that cannot be written at the end (its folder replaced by a file): the results go to
  ccbench-unsaved-<pid>-<name> in the working folder, named on stderr, exit 5;
- `timeout` sending TERM to scripts/mpirun.sh (and to its whole process group): the result file
  says interrupted, exit_code 143, and holds every row of the stream.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "run"))
import ccbench_mpi as m  # noqa: E402

QUICK = ["-b", "1K", "-e", "4K", "-n", "3", "-w", "0", "--ops", "allreduce", "--in-place", "no"]
# About 0.25 s a size, 11 sizes: long enough to act on a run while it goes.
SLOW = ["-b", "1K", "-e", "1M", "-w", "0", "--ops", "allreduce", "--in-place", "no", "--target-ci", "0.0001",
        "--max-time-per-size", "0.25"]


def jsonl_rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class HostileRun(unittest.TestCase):
    def setUp(self):
        self.d = Path(tempfile.mkdtemp(prefix="ccbench-hostile-run-"))

    def tearDown(self):
        shutil.rmtree(self.d, ignore_errors=True)

    def test_missing_folders_are_created_and_named(self):
        out = self.d / "a" / "b" / "r.json"
        p = m.run(2, QUICK + ["-J", str(out)])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"ccbench: -J/--json: created the folder {self.d}/a\n"
                      f"ccbench: -J/--json: created the folder {self.d}/a/b\n", p.stderr)
        self.assertEqual(m.load(out)["run"]["status"], "complete")
        # Without -J: said so, as a run with one says where its file went.
        p = m.run(2, QUICK)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("# no result file written (-J PATH writes one)\n", p.stdout)
        # An existing folder: nothing said.
        p = m.run(2, QUICK + ["-J", str(out)])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("created the folder", p.stderr)

    def test_a_folder_directly_under_root_is_refused(self):
        top = Path(f"/ccbench-nonexistent-{os.getpid()}")
        self.assertFalse(top.exists())
        p = m.run(2, QUICK + ["-J", f"{top}/dir/x.json"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"ccbench run: -J/--json {top}/dir/x.json: folder {top} does not exist (missing folders are "
                      "created, but not directly under /)\n", p.stderr)
        self.assertFalse(top.exists())

    def test_second_run_on_the_same_stream_is_refused(self):
        out = self.d / "r.json"
        first = m.start(2, SLOW + ["-J", str(out), "--label", "first-of-two"])
        try:
            self.assertTrue(m.wait_for_rows(str(out) + "l", 1, timeout=60), "the first run wrote no row")
            second = m.run(2, QUICK + ["-J", str(out)])
            self.assertEqual(second.returncode, 2, second.stderr)
            self.assertIn(f"ccbench run: -J/--json {out}: another run is writing {out}l (it holds the stream's "
                          "lock); give each run its own -J\n", second.stderr)
            _, err = first.communicate(timeout=120)
        finally:
            if first.poll() is None:
                os.killpg(first.pid, signal.SIGKILL)
        self.assertEqual(first.returncode, 0, err)
        rows = jsonl_rows(str(out) + "l")  # every line parses
        self.assertEqual(len(rows), 11)
        self.assertEqual(len(m.load(out)["results"]), 11)

    def test_folder_removed_mid_run_is_created_again(self):
        folder = self.d / "d"
        out = folder / "r.json"
        run = m.start(2, SLOW + ["-J", str(out), "--label", "folder-removed"])
        try:
            self.assertTrue(m.wait_for_rows(str(out) + "l", 2, timeout=60), "no rows")
            m.remove_folder_under_a_writer(folder)
            _, err = run.communicate(timeout=120)
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
        self.assertEqual(run.returncode, 0, err)
        self.assertRegex(err, rf"ccbench: warning: {folder} was removed during the run; wrote it again with the \d+ "
                              r"results so far\n")
        self.assertEqual(len(m.load(out)["results"]), 11)
        self.assertEqual(len(jsonl_rows(str(out) + "l")), 11)

    def test_unwritable_at_the_end_is_exit_5_and_kept_elsewhere(self):
        folder = self.d / "d"
        out = folder / "sub" / "r.json"
        work = self.d / "work"
        work.mkdir()
        e = m.env()
        run = subprocess.Popen(m.MPIRUN + ["-np", "2", os.path.abspath(m.CCBENCH), "run"] + SLOW +
                               ["-J", str(out), "--label", "unwritable"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=e, cwd=work, start_new_session=True)
        try:
            self.assertTrue(m.wait_for_rows(str(out) + "l", 2, timeout=60), "no rows")
            m.replace_folder_with_a_file(folder)  # nothing can be created under it
            stdout, err = run.communicate(timeout=120)
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
        self.assertEqual(run.returncode, 5, err)
        kept = list(work.glob("ccbench-unsaved-*-r.json"))
        self.assertEqual(len(kept), 1, list(work.iterdir()))
        self.assertIn(f"the 11 results were saved to {kept[0]} instead\n", err)
        self.assertIn(f"# result file: {kept[0]} (could not write {out})\n", stdout)
        doc = m.load(kept[0])
        self.assertEqual((doc["run"]["status"], len(doc["results"])), ("complete", 11))

    def test_timeout_term_through_the_wrapper(self):
        wrapper = os.path.join(m.SOURCE, "scripts", "mpirun.sh")
        launch = [wrapper, "-np", "2", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none", m.CCBENCH, "run"]
        slower = SLOW[:-1] + ["1.0"]  # 11 sizes of 1 s: either signal comes in the middle
        # A TERM sent to `timeout` itself (it passes it to its child and its whole process group:
        # mpirun got it twice and killed the ranks before rank 0 saved), then timeout expiring.
        for how in ("term-to-timeout", "expiry"):
            with self.subTest(how=how):
                out = self.d / f"{how}.json"
                limit = "60" if how == "term-to-timeout" else "6"
                proc = subprocess.Popen(["timeout", "-s", "TERM", limit] + launch + slower + ["-J", str(out)],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=m.env(),
                                        start_new_session=True)
                try:
                    if how == "term-to-timeout":
                        self.assertTrue(m.wait_for_rows(str(out) + "l", 2, timeout=60), "no rows")
                        os.kill(proc.pid, signal.SIGTERM)
                    _, err = proc.communicate(timeout=120)
                finally:
                    if proc.poll() is None:
                        os.killpg(proc.pid, signal.SIGKILL)
                # timeout: 124 when it expired; signalled itself, its child's code (the wrapper's 143).
                self.assertEqual(proc.returncode, 124 if how == "expiry" else 143, err)
                doc = m.load(out)
                rows = jsonl_rows(str(out) + "l")
                self.assertEqual((doc["run"]["status"], doc["run"]["exit_code"]), ("interrupted", 143), err)
                self.assertGreaterEqual(len(rows), 1)
                self.assertLess(len(rows), 11)
                self.assertEqual(len(doc["results"]), len(rows))


if __name__ == "__main__":
    unittest.main()
