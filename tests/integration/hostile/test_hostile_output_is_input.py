#!/usr/bin/python3
"""Issue 37 item 7: an output that is one of the command's inputs is refused, and the input is kept.

Before, each of these overwrote what it read with exit 0 (or, for a run, replaced the config it was
started from): `trace import --out` naming a log, `import --out`, `report --out` naming an input
file, `replay -J TRACE`, `run --config X -J X`; and, new since, `model fit -o`, `model check -o`,
`compare --out` the same way. Now each is exit 2 with one line naming the flag and the path, the
input's bytes unchanged, and nothing measured or computed first. A result file in an input folder
is refused too (the folder's *.json are what the command reads); another file there, and any new
path, are written as before (core/output_folders.cpp, refuse_output_among_inputs).

Environment: CCBENCH (the binary), CCBENCH_SOURCE (the checkout). Real mpirun for replay and run.
"""
import hashlib
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = Path(os.environ.get("CCBENCH_SOURCE", ".")).resolve()
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
DATA = SOURCE / "tests" / "data"


def env():
    e = dict(os.environ)
    e.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    return e


def run(args, cwd, timeout=120):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env())


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class OutputIsInput(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="ccbench-out-in-"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def copy(self, source, name):
        target = self.dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
        return target

    def refused(self, args, kept, flag, says, launcher=()):
        """args exit 2 naming `flag` and `says`, and every file of `kept` has its bytes."""
        before = {k: digest(k) for k in kept}
        r = run([*launcher, CCBENCH, *args], cwd=self.dir)
        text = r.stdout + r.stderr
        self.assertEqual(r.returncode, 2, text)
        lines = [line for line in r.stderr.splitlines() if flag in line and says in line]
        self.assertTrue(lines, f"no line naming {flag} and '{says}':\n{text}")
        for k in kept:
            self.assertEqual(digest(k), before[k], f"{k} was changed")
        return lines[0]

    def test_trace_import_out_naming_its_log(self):
        log = self.copy(DATA / "trace" / "nccl_rank0.log", "rank0.log")
        line = self.refused(["trace", "import", "nccl-log", "rank0.log", "--out", "rank0.log"], [log], "--out rank0.log",
                            "is the input rank0.log (the same file)")
        self.assertEqual(line, "ccbench trace: --out rank0.log: is the input rank0.log (the same file); writing it would "
                         "replace what is read")

    def test_import_out_through_a_link(self):
        log = self.copy(DATA / "compare" / "nccl-tests-allreduce.txt", "log.txt")
        (self.dir / "link.json").symlink_to("log.txt")  # the same file under another name
        self.refused(["import", "nccl-tests", "log.txt", "--out", "link.json"], [log], "--out link.json",
                     "is the input log.txt")

    def test_report_out_naming_an_input_file_or_a_result_file_in_an_input_folder(self):
        result = self.copy(DATA / "report" / "local-mpi.json", "runs/a.json")
        self.refused(["report", "runs/a.json", "--format", "gbench", "--out", "runs/a.json"], [result],
                     "--out runs/a.json", "is the input")
        self.refused(["report", "runs", "--format", "gbench", "--out", "runs/a.json"], [result], "--out runs/a.json",
                     "is a result file in the input folder runs")
        # The report beside them, and a new path, are written.
        r = run([CCBENCH, "report", "runs", "--out", "runs/report.html"], cwd=self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue((self.dir / "runs" / "report.html").stat().st_size > 0)

    def test_compare_out_naming_the_baseline(self):
        base = self.copy(DATA / "report" / "local-mpi.json", "base.json")
        cand = self.copy(DATA / "report" / "local-mpi.json", "cand.json")
        self.refused(["compare", "base.json", "cand.json", "--out", "base.json"], [base, cand], "--out base.json",
                     "is the input base.json")

    def test_model_fit_and_model_check_outputs_among_their_inputs(self):
        published = sorted((SOURCE / "results" / "published").glob("p5-hyperpod-*-allreduce.json"))
        runs = [self.copy(p, f"runs/{p.name}") for p in published]
        self.refused(["model", "fit", "runs", "-o", f"runs/{published[0].name}"], runs, "-o runs/",
                     "is a result file in the input folder runs")
        model = self.dir / "m.json"
        r = run([CCBENCH, "model", "fit", "runs", "-o", model, "--refits", "20"], cwd=self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        one = f"runs/{published[1].name}"
        self.refused(["model", "check", "m.json", one, "-o", one], [*runs, model], f"-o {one}", "is the input")
        self.refused(["model", "check", "m.json", "runs", "-o", "runs"], [*runs, model], "-o runs/",
                     "is a result file in the input folder runs")
        self.refused(["model", "check", "m.json", one, "-o", "m.json"], [*runs, model], "-o m.json", "is the input m.json")

    def test_replay_json_naming_its_trace(self):
        trace = self.copy(DATA / "replay" / "two_ranks.trace.json", "job.trace.json")
        self.refused(["replay", "job.trace.json", "-J", "job.trace.json", "--steps", "1"], [trace],
                     "-J/--json job.trace.json", "is the input job.trace.json", launcher=[*MPIRUN, "-np", "2"])

    def test_run_json_naming_its_config_file(self):
        config = self.dir / "sweep.yaml"
        config.write_text("ops: [allreduce]\nmin_bytes: 1K\nmax_bytes: 2K\niters: 5\nwarmup: 1\n")
        self.refused(["run", "--config", "sweep.yaml", "-J", "sweep.yaml"], [config], "-J/--json sweep.yaml",
                     "is the input sweep.yaml", launcher=[*MPIRUN, "-np", "2"])


if __name__ == "__main__":
    unittest.main()
