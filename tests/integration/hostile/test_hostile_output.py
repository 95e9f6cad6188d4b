#!/usr/bin/python3
"""Issue 27 items 17 (--out), 19 and 20: what a new user's commands write and print.

- 17: every command that writes a file creates its missing folders as `run -J` does (one line
  each, "ccbench: FLAG: created the folder X"), refuses one directly under / (exit 2, nothing
  created) and one it cannot make (a file in the way: exit 2, the file untouched), one line naming
  the flag and the path: import, report, compare, model fit, model plan, info.
- 19: scripts/run.sh prints progress only to a terminal, there as one line rewritten in place, and
  records the sweep's config relative to the checkout; compare says "trials in 1 launch each" for
  `run --trials 5` launches (they are not 5 launches); the HTML report draws a folder of launches
  as one curve per side (2 colours for 6 + 6 files, not 12 in repeated colours) and the claim as
  a sentence; a failing congestion gate (and any ccbench exit code) through scripts/mpirun.sh
  prints no Open MPI abort boxes, while the launcher's other notices stay. (The time left weighed
  by bytes: tests/unit/report/progress_line_test.cpp.)
- 20: the README says near its top, and docs/run.md where GPU runs are introduced, that the NCCL backend has
  not run on a GPU, with what was checked.

Environment: CCBENCH (the binary), CCBENCH_SOURCE (the checkout). Real mpirun, 2 and 4 ranks.
"""
import html
import json
import os
import pty
import re
import select
import shutil
import subprocess
import tempfile
import time
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


class Launches(unittest.TestCase):
    """Item 19: compare's count of launches, and the HTML report of folders of launches."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="ccbench-launches-"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_trials_of_one_launch_are_not_called_launches(self):
        files = []
        for side in ("a", "b"):
            out = self.tmp / f"{side}.json"
            p = run(MPIRUN + ["-np", "2", CCBENCH, "run", *QUICK, "--trials", "5", "-J", out], timeout=180)
            self.assertEqual(p.returncode, 0, p.stderr)
            files.append(out)
        p = ccbench("compare", *files)
        self.assertIn(p.returncode, (0, 1, 4), p.stderr)  # no claim: the verdict does not matter here
        self.assertIn("CIs: t intervals on trials (5 vs 5 trials in 1 launch each)", p.stdout)
        self.assertNotIn("5 vs 5 launches", p.stdout)

    def test_a_folder_of_launches_is_one_curve_per_side(self):
        data = self.tmp / "sides"
        p = run(["/usr/bin/python3", SOURCE / "tests" / "unit" / "compare" / "readme_session.py", data])
        self.assertEqual(p.returncode, 0, p.stderr)
        base, cand = data / "p5en", data / "p6-b200"
        self.assertEqual(len(list(base.glob("*.json"))), 6)
        page = self.tmp / "sides.html"
        p = ccbench("report", "--baseline", base, cand, "--claim", SOURCE / "configs" / "claims" / "efa-v4-vs-v3.yaml",
                    "--out", page)
        self.assertEqual(p.returncode, 0, p.stderr)
        sources = [("page", page.read_text())]
        browser = shutil.which("chromium") or shutil.which("chromium-browser")
        if browser:  # the DOM a real browser built from it must say the same
            profile = self.tmp / "profile"
            r = run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--host-resolver-rules=MAP * ~NOTFOUND",
                     "--dump-dom", f"file://{page}"], timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr[-500:])
            sources.append(("chromium DOM", r.stdout))
        for where, text in sources:
            with self.subTest(source=where):
                op_charts = [c for c in charts_of(text) if ": bus bandwidth" in c["title"] or ": latency" in c["title"]]
                self.assertEqual(len(op_charts), 6, [c["title"] for c in op_charts])  # 3 ops x 2 charts
                for c in op_charts:
                    self.assertEqual(len(c["series"]), 2, c)  # baseline and candidate, not 12 launches
                    self.assertEqual(len(set(c["series"])), 2, c)  # a colour each
                    self.assertEqual(c["bands"], 2, c)  # each side's spread over its launches
                    self.assertEqual(sorted(c["legend"]), [f"{base} (6 launches)", f"{cand} (6 launches)"], c)
                claim = claim_of(text)
                self.assertTrue(claim.startswith('Claim: "P6e-GB200 and P6-B200 instances with EFAv4'), claim)
                self.assertIn("ratio band [1.130, 1.230] (expected +18.0% ± 5.0%)", claim)
                self.assertIn("baseline requires efa_generation v3; candidate requires efa_generation v4", claim)
                for raw in ("{", '"efa_generation"', "expected_ratio:", "file:"):
                    self.assertNotIn(raw, claim)


    def test_a_folder_of_other_sweeps_keeps_a_curve_per_file(self):
        # The published results: other node counts and ops, not launches of one sweep.
        page = self.tmp / "published.html"
        p = ccbench("report", PUBLISHED, "--out", page)
        self.assertEqual(p.returncode, 0, p.stderr)
        allreduce = len([f for f in PUBLISHED.glob("*.json")
                         if json.loads(f.read_text())["results"][0]["op"] == "allreduce"])
        (chart,) = [c for c in charts_of(page.read_text()) if c["title"] == "allreduce: bus bandwidth"]
        self.assertEqual(len(set(chart["series"])), allreduce, chart)  # a colour per file (in- and out-of-place)
        self.assertFalse(any("launches)" in name for name in chart["legend"]), chart)


def charts_of(page):
    """Per <svg>: its title, the stroke colour of each series line, its bands and its legend texts."""
    charts = []
    for svg in re.findall(r"<svg\b.*?</svg>", page, re.S):
        legend = re.search(r'<g class="legend">(.*?)</g>', svg, re.S)
        charts.append({
            "title": html.unescape(re.search(r'aria-label="([^"]*)"', svg).group(1)),
            "series": [re.search(r'stroke="([^"]*)"', line).group(1)
                       for line in re.findall(r"<polyline\b[^>]*>", svg) if 'class="series"' in line],
            "bands": len([b for b in re.findall(r"<polygon\b[^>]*>", svg) if 'class="band"' in b]),
            "legend": [html.unescape(t) for t in re.findall(r"<text\b[^>]*>([^<]*)</text>", legend.group(1))]
            if legend else [],
        })
    return charts


def claim_of(page):
    found = re.search(r"<p>(Claim: .*?)</p>", page, re.S)
    return html.unescape(found.group(1)) if found else ""


class RunSh(unittest.TestCase):
    """Item 19: scripts/run.sh, the README's first command, from the checkout (a small sweep)."""

    SWEEP = ["--", "--ops", "allreduce", "-e", "1K", "--in-place", "no"]

    def remove_later(self, text):
        # run.sh writes results/local/<stamp>.{json,jsonl,html} into the checkout and names it in its
        # first line: those files go again, whether the test passes or not.
        for stamp in set(re.findall(r"results/local/(\d{8}T\d{6}Z)\.json", text)):
            for suffix in (".json", ".jsonl", ".html"):
                self.addCleanup((SOURCE / "results" / "local" / (stamp + suffix)).unlink, missing_ok=True)

    def run_sh(self, terminal):
        e = env()
        e.update(CCBENCH_SKIP_APT="1", BUILD_DIR=str(Path(CCBENCH).resolve().parent), TERM="xterm")
        cmd = [str(SOURCE / "scripts" / "run.sh"), *self.SWEEP]
        if not terminal:
            p = subprocess.run(cmd, cwd=SOURCE, env=e, capture_output=True, text=True, timeout=600)
            self.remove_later(p.stdout)
            return p.returncode, p.stdout + p.stderr
        master, slave = pty.openpty()
        proc = subprocess.Popen(cmd, cwd=SOURCE, env=e, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
        os.close(slave)
        chunks, deadline = [], time.monotonic() + 600
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        os.close(master)
        self.remove_later(b"".join(chunks).decode(errors="replace"))
        try:
            rc = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            self.fail("scripts/run.sh on a terminal did not end within 600 s")
        return rc, b"".join(chunks).decode(errors="replace")

    def result_of(self, text):
        found = re.search(r"^run: result file (results/local/\d{8}T\d{6}Z\.json) \(exit 0\)\r?$", text, re.M)
        self.assertIsNotNone(found, text[-2000:])
        return json.loads((SOURCE / found.group(1)).read_text())

    def test_a_pipe_gets_the_table_alone_and_no_machine_path(self):
        rc, text = self.run_sh(terminal=False)
        self.assertEqual(rc, 0, text[-2000:])
        progress = [line for line in text.splitlines() if PROGRESS.match(line)]
        self.assertEqual(progress, [], "progress lines in a log")
        self.assertRegex(text, r"\n +1024 +256 +float +sum")  # the table is there
        result = self.result_of(text)
        command = result["run"]["command"]
        self.assertEqual(command[command.index("--config") + 1], "configs/sweeps/quick.yaml", command)
        self.assertNotIn(str(SOURCE), json.dumps(result["run"]["command"]))
        self.assertIn("run: mpirun -np 2 ccbench run --config configs/sweeps/quick.yaml -J results/local/", text)

    def test_a_terminal_gets_one_progress_line_rewritten_in_place(self):
        rc, text = self.run_sh(terminal=True)
        self.assertEqual(rc, 0, text[-2000:])
        self.assertIn("\r\x1b[K[1/8] allreduce 8 out-of-place: ", text)
        self.assertIn("\r\x1b[K[8/8] allreduce 1K out-of-place: ", text)
        # What stays on the screen: each line as drawn after its last "clear the line".
        shown = [line.split("\r\x1b[K")[-1] for line in text.replace("\r\n", "\n").split("\n")]
        self.assertEqual([line for line in shown if PROGRESS.match(line)], [], "a progress line left in the table")
        self.assertTrue(any(re.match(r" +1024 +256 +float +sum", line) for line in shown), shown[-20:])
        self.result_of(text)


class LauncherWrapper(unittest.TestCase):
    """Item 19: ccbench's exit codes through scripts/mpirun.sh, without Open MPI's abort boxes."""

    def test_a_failing_congestion_gate_exits_quietly(self):
        # One trial: the gate cannot decide (exit 4, deterministic); a gate above --max-impact
        # (exit 1) leaves through the same path.
        p = run([WRAPPER, "-np", "4", CCBENCH, "congestion", "--ranks-per-host", "2", "--measured-ranks", "0,1",
                 "--congestors", "alltoall", "--bw-bytes", "4K", "--congestor-bytes", "64K", "--trials", "1",
                 "-n", "5", "-w", "1", "--max-impact", "2"], timeout=240)
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertIn("# gate --max-impact 2: undecidable", p.stdout)
        for box in OPEN_MPI_EXIT_BOXES:
            self.assertNotIn(box, p.stderr)
        self.assertNotIn("-" * 60, p.stderr)

    def test_a_usage_error_is_its_one_line(self):
        top = f"/ccbench-output-nonexistent-{os.getpid()}"
        p = run([WRAPPER, "-np", "2", CCBENCH, "run", *QUICK, "-J", f"{top}/d/x.json"], timeout=120)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr, f"ccbench run: -J/--json {top}/d/x.json: folder {top} does not exist (missing "
                                   "folders are created, but not directly under /)\n")

    def test_the_launchers_other_notices_stay(self):
        # Too few slots is mpirun's own failure: its box is all the user gets, so it is kept.
        e = env()
        del e["OMPI_MCA_rmaps_base_oversubscribe"]
        p = subprocess.run([WRAPPER, "--host", "localhost:1", "-np", "2", "true"], capture_output=True, text=True,
                           timeout=60, env=e)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("There are not enough slots available in the system", p.stderr)


class Readme(unittest.TestCase):
    """Item 20: the README near its top, and docs/run.md where GPU runs are introduced, say the NCCL
    backend has not run on one."""

    def test_the_gpu_status_is_stated_near_the_top_and_in_gpu_runs(self):
        text = (SOURCE / "README.md").read_text()
        top = text[:text.index("## What it does")]
        self.assertIn("**The NCCL backend has not yet run on a GPU.**", top)
        for checked in ("CUDA 13.0", "NCCL 2.28", "recording fake", "scripts/device-check.sh"):
            self.assertIn(checked, top)
        run_page = (SOURCE / "docs" / "run.md").read_text()
        gpu = run_page[run_page.index("## GPU runs (NCCL)"):]
        gpu = gpu[:gpu.index("\n```")]
        self.assertIn("Not yet run on a GPU", gpu)
        # What was checked matches what the NCCL page and the device script say.
        nccl_page = (SOURCE / "docs" / "nccl-backend.md").read_text()
        self.assertIn("## Untested on a GPU", nccl_page)
        self.assertIn("recording fake", nccl_page)
        self.assertTrue((SOURCE / "scripts" / "device-check.sh").is_file())


if __name__ == "__main__":
    unittest.main()
