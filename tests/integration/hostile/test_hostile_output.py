#!/usr/bin/python3
"""Issue 27 item 17 (--out): every command that writes a file creates its missing folders as
`run -J` does (one line each, "ccbench: FLAG: created the folder X"), refuses one directly under /
(exit 2, nothing created) and one it cannot make (a file in the way: exit 2, the file untouched),
one line naming the flag and the path: import, report, compare, model fit, model plan, info.

Environment: CCBENCH (the binary), CCBENCH_SOURCE (the checkout).
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = Path(os.environ.get("CCBENCH_SOURCE", ".")).resolve()
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
WRAPPER = str(SOURCE / "scripts" / "mpirun.sh")
NCCL_LOG = SOURCE / "tests" / "data" / "compare" / "nccl-tests-allreduce.txt"
RESULT = SOURCE / "tests" / "data" / "report" / "local-mpi.json"
PUBLISHED = SOURCE / "results" / "published"
WORKLOAD = SOURCE / "configs" / "workloads" / "dense-70b-fsdp.yaml"
QUICK = ["--ops", "allreduce", "-b", "1K", "-e", "2K", "-n", "10", "-w", "1", "--in-place", "no"]
PROGRESS = re.compile(r"^\[ *\d+/\d+\] ")
OPEN_MPI_EXIT_BOXES = ("Primary job  terminated normally", "mpirun detected that one or more processes exited")


def env():
    e = dict(os.environ)
    e.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    return e


def run(args, timeout=120, cwd=None):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env())


def ccbench(*args, timeout=120, cwd=None):
    return run([CCBENCH, *args], timeout=timeout, cwd=cwd)


class OutputFolders(unittest.TestCase):
    """Item 17: one rule for every file a command writes."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="ccbench-output-"))
        cls.model = cls.tmp / "model.json"
        p = ccbench("model", "fit", PUBLISHED / "p5-hyperpod-2n-allreduce.json",
                    PUBLISHED / "p5-hyperpod-4n-allreduce.json", "--refits", "5", "-o", cls.model)
        assert p.returncode == 0, p.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def commands(self, out):
        """(name, flag, argv writing OUT, exit code when written)."""
        return [
            ("import", "--out", ["import", "nccl-tests", NCCL_LOG, "--out", out], 0),
            ("report", "--out", ["report", RESULT, "--out", out], 0),
            ("compare", "--out", ["compare", RESULT, RESULT, "--out", out], 0),
            ("model fit", "-o", ["model", "fit", PUBLISHED / "p5-hyperpod-2n-allreduce.json",
                                 PUBLISHED / "p5-hyperpod-4n-allreduce.json", "--refits", "5", "-o", out], 0),
            ("model plan", "--out", ["model", "plan", self.model, "--workload", WORKLOAD, "--out", out], 0),
            ("info", "--out", ["info", "--out", out], 0),
        ]

    def test_missing_folders_are_created_and_named(self):
        for name, flag, _, _ in self.commands(""):
            with self.subTest(command=name):
                base = self.tmp / name.replace(" ", "-")
                out = base / "old-fleet" / "day" / "x.json"
                (cmd,) = [c for n, _, c, _ in self.commands(str(out)) if n == name]
                p = ccbench(*cmd)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn(f"ccbench: {flag}: created the folder {base}\n"
                              f"ccbench: {flag}: created the folder {base}/old-fleet\n"
                              f"ccbench: {flag}: created the folder {base}/old-fleet/day\n", p.stderr)
                self.assertTrue(out.is_file() and out.stat().st_size > 0, name)

    def test_relative_folder_as_in_the_readme(self):
        # README: `ccbench import nccl-tests ... --out old-fleet/ar-1.json` from a fresh folder.
        work = self.tmp / "readme"
        work.mkdir()
        p = ccbench("import", "nccl-tests", NCCL_LOG, "--out", "old-fleet/ar-1.json", cwd=work)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("ccbench: --out: created the folder old-fleet\n", p.stderr)
        self.assertEqual(json.loads((work / "old-fleet" / "ar-1.json").read_text())["schema_version"], 1)

    def test_a_folder_directly_under_root_is_refused(self):
        top = Path(f"/ccbench-output-nonexistent-{os.getpid()}")
        self.assertFalse(top.exists())
        for name, flag, cmd, _ in self.commands(f"{top}/dir/x.json"):
            with self.subTest(command=name):
                p = ccbench(*cmd)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(p.stderr.splitlines()[-1],
                                 f"ccbench {name}: {flag} {top}/dir/x.json: folder {top} does not exist "
                                 "(missing folders are created, but not directly under /)")
                self.assertFalse(top.exists())

    def test_a_file_in_the_way_is_named_and_untouched(self):
        blocker = self.tmp / "blocker"
        blocker.write_text("keep me\n")
        for name, flag, cmd, _ in self.commands(f"{blocker}/sub/x.json"):
            with self.subTest(command=name):
                p = ccbench(*cmd)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(p.stderr.splitlines()[-1],
                                 f"ccbench {name}: {flag} {blocker}/sub/x.json: cannot create the folder "
                                 f"{blocker}/sub: Not a directory")
                self.assertEqual(blocker.read_text(), "keep me\n")

    def test_a_folder_as_the_file_is_refused(self):
        for name, flag, cmd, _ in self.commands(str(self.tmp)):
            with self.subTest(command=name):
                p = ccbench(*cmd)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(p.stderr.splitlines()[-1],
                                 f"ccbench {name}: {flag} {self.tmp}: is a folder, expected a file path")


if __name__ == "__main__":
    unittest.main()
