#!/usr/bin/python3
"""Issue 23's hostile inputs to `ccbench congestion` under a real mpirun (4 ranks as 2 hosts of 2):

- --measured-ranks 0-2147483647 built 2^31 ranks before checking: refused at once, exit 2;
- --bw-bytes / --congestor-bytes 1T said "std::bad_alloc", --trials 2000000000 too: the flag named;
- --lat-bytes 1 (below one element per rank) said "nothing to measure" without the flag: named, with
  the least size that works;
- -n 1 gave a p99 factor from one sample a phase and passed the gate silently: not computed, said;
- -J dir/ wrote hidden files (.impact.json): dir/congestion.impact.json, which report lists;
- an interrupted run wrote no summary and marked its phase files two ways: every file says
  interrupted and PATH.impact.json holds the trials that finished;
- a -J folder that cannot be written at the end lost every file (exit 2 "before measuring"):
  kept in the working folder, exit 5.
"""
import csv
import glob
import io
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

CCBENCH = os.path.abspath(os.environ.get("CCBENCH", "build/ccbench"))
SOURCE = os.environ.get("CCBENCH_SOURCE", ".")
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
PREFIX = "ccbench congestion: "
BASE = ["--ranks-per-host", "2", "--measured-ranks", "0,1", "--congestors", "alltoall", "--bw-bytes", "4K",
        "--congestor-bytes", "64K", "-w", "0"]


def env():
    e = dict(os.environ)
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return e


def congestion(args, timeout=180, cwd=None):
    start = time.monotonic()
    p = subprocess.run(MPIRUN + ["-np", "4", CCBENCH, "congestion"] + args, capture_output=True, text=True,
                       timeout=timeout, env=env(), cwd=cwd)
    return p, time.monotonic() - start


def message(proc):
    return [line for line in proc.stderr.splitlines() if line.startswith(PREFIX)]


class Hostile(unittest.TestCase):
    def setUp(self):
        self.d = Path(tempfile.mkdtemp(prefix="ccbench-hostile-congestion-"))

    def tearDown(self):
        shutil.rmtree(self.d, ignore_errors=True)

    def test_huge_rank_range_is_refused_at_once(self):
        p, took = congestion(["--ranks-per-host", "2", "--measured-ranks", "0-2147483647"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(message(p), [PREFIX + "--measured-ranks: rank 2147483647 in '0-2147483647' is above "
                                               "1048575, the largest rank a list may name"])
        self.assertLess(took, 30)
        p, _ = congestion(["--ranks-per-host", "2", "--measured-ranks", "0-99999999999"])
        self.assertEqual(message(p), [PREFIX + "--measured-ranks: rank 99999999999 in '0-99999999999' is above "
                                               "1048575, the largest rank a list may name"])

    def test_sizes_that_cannot_fit_name_their_flag(self):
        for flag in ("--bw-bytes", "--congestor-bytes"):
            with self.subTest(flag=flag):
                args = [a if a != flag else a for a in BASE]
                i = args.index(flag)
                args[i + 1] = "1T"
                p, _ = congestion(args + ["-n", "5"])
                self.assertEqual(p.returncode, 2, p.stderr)
                lines = message(p)
                self.assertEqual(len(lines), 1, p.stderr)
                # Agreed over the ranks that hit it: "rank N: " before each when not rank 0 alone.
                self.assertRegex(lines[0], rf"^{PREFIX}(rank \d: )?{flag} 1T: needs 2097152\.0 MiB of buffers per "
                                           r"rank, but only \d+\.\d MiB is available per rank \(4 ranks on this node\)")
        p, _ = congestion(BASE + ["--trials", "2000000000"])
        self.assertEqual(message(p), [PREFIX + "--trials: at most 1000000, got 2000000000"])

    def test_sizes_below_one_element_name_their_flag(self):
        # --lat-bytes 1 said "nothing to measure; allreduce 1: smaller than one element per rank",
        # without the flag; --congestor-bytes 1 came once per congestor rank.
        cases = [("--lat-bytes", "1", "allreduce of float over 2 ranks needs at least 4 bytes"),
                 ("--lat-bytes", "3", "allreduce of float over 2 ranks needs at least 4 bytes"),
                 ("--bw-bytes", "5", "alltoall of float over 2 ranks needs at least 32 bytes"),
                 ("--congestor-bytes", "1", "alltoall of float over 2 ranks needs at least 32 bytes")]
        for flag, value, why in cases:
            with self.subTest(flag=flag, value=value):
                args = list(BASE)
                if flag in args:
                    args[args.index(flag) + 1] = value
                else:
                    args += [flag, value]
                p, _ = congestion(args + ["-n", "5", "--trials", "2"])
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(message(p), [f"{PREFIX}{flag} {value}: {why}"])

    def test_one_sample_a_phase_gives_no_p99_factor(self):
        p, _ = congestion(BASE + ["-n", "1", "--trials", "3", "--max-impact", "1e6", "-J", str(self.d / "c.json")])
        self.assertIn(p.returncode, (0, 4), p.stderr)
        self.assertIn("# impact p99 not computed: 1 sample a phase, fewer than 5 (raise -n)\n", p.stdout)
        self.assertIn("; 3 p99 factors not judged (fewer than 5 samples a phase: raise -n) (exit", p.stdout)
        rows = [l.split() for l in p.stdout.splitlines() if l and not l.startswith("#")]
        self.assertEqual(len(rows), 3)
        for r in rows:
            self.assertEqual(r[-1], "-", r)  # the p99 factor column
        s = json.loads((self.d / "c.impact.json").read_text())
        for imp in s["impacts"]:
            self.assertEqual(imp["impact_p99"]["not_computed"], "1 sample a phase, fewer than 5")
            self.assertNotIn("not_computed", imp["impact_median"])

    def test_json_into_a_folder(self):
        out = self.d / "out"
        out.mkdir()
        p, _ = congestion(BASE + ["-n", "5", "--trials", "2", "-J", f"{out}/"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(os.listdir(out)), sorted(
            ["congestion.impact.json", "congestion.alltoall.isolated.json", "congestion.alltoall.isolated.jsonl",
             "congestion.alltoall.congested.json", "congestion.alltoall.congested.jsonl"]))
        # The report of the folder holds every row of the two phase files, with their numbers (csv
        # keeps full precision), and nothing of the summary or the .jsonl streams.
        r = subprocess.run([CCBENCH, "report", str(out), "--format", "csv"], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        report = list(csv.DictReader(io.StringIO(r.stdout)))
        phases = {"isolated", "congested"}
        self.assertEqual({row["file"] for row in report},
                         {str(out / f"congestion.alltoall.{phase}.json") for phase in phases})
        for phase in phases:
            path = out / f"congestion.alltoall.{phase}.json"
            results = json.loads(path.read_text())["results"]
            rows = [row for row in report if row["file"] == str(path)]
            self.assertTrue(results, path)
            self.assertEqual(len(rows), len(results), path)
            for row, result in zip(rows, results):
                got = (row["label"], row["op"], int(row["bytes"]), int(row["ranks"]), int(row["trial"]),
                       int(row["n_samples"]), float(row["time_us_median"]), float(row["time_us_p99"]),
                       float(row["busbw_gbps"]), int(row["wrong"]))
                want = (f"congestion alltoall {phase}", result["op"], result["bytes"], result["ranks"],
                        result["trial"], len(result["samples_us"]), result["time_us"]["median"],
                        result["time_us"]["p99"], result["busbw_gbps"], result["wrong"])
                self.assertEqual(got, want, path)

    # It failed 1 run in 2 (the isolated phase file said 'incomplete' while the congested one said
    # 'interrupted'): the signal handler read the current phase's writer twice while the main thread
    # moved on to the next phase, so one file was finished by no one. Fixed; passed 10 of 10 under load.
    def test_interrupted_run_writes_its_summary(self):
        out = self.d / "c.json"
        wrapper = os.path.join(SOURCE, "scripts", "mpirun.sh")
        proc = subprocess.Popen([wrapper, "-np", "4", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none",
                                 CCBENCH, "congestion"] + BASE + ["-n", "20", "--trials", "100000", "-J", str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
                                start_new_session=True)
        try:
            deadline = time.time() + 60
            congested = self.d / "c.alltoall.congested.jsonl"
            while time.time() < deadline:
                if congested.exists() and len(congested.read_text().splitlines()) >= 6:
                    break
                time.sleep(0.1)
            os.kill(proc.pid, signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        self.assertEqual(proc.returncode, 143, err)
        statuses = {f: json.loads(Path(f).read_text())["run"]["status"] for f in glob.glob(f"{self.d}/c.alltoall.*.json")}
        self.assertEqual(set(statuses.values()), {"interrupted"}, statuses)
        s = json.loads((self.d / "c.impact.json").read_text())
        self.assertEqual((s["status"], s["exit_code"]), ("interrupted", 143))
        self.assertEqual(len(s["impacts"]), 3)
        self.assertGreaterEqual(s["impacts"][0]["impact_median"]["trials"], 2)
        # Rank 0 names the trial the run was at, as the congestors do.
        names = [l for l in err.splitlines() if "trial " in l and "rank 0" in l]
        self.assertTrue(names, err)
        self.assertNotRegex(names[0], r"trial 1, ", err)

    def test_unwritable_at_the_end_is_exit_5(self):
        work = self.d / "work"
        work.mkdir()
        folder = self.d / "gone"
        out = folder / "sub" / "c.json"
        proc = subprocess.Popen(MPIRUN + ["-np", "4", CCBENCH, "congestion"] + BASE +
                                ["-n", "20", "--trials", "30", "-J", str(out)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env(), cwd=work, start_new_session=True)
        try:
            deadline = time.time() + 60
            while time.time() < deadline and not (folder / "sub" / "c.alltoall.congested.jsonl").exists():
                time.sleep(0.05)
            m.replace_folder_with_a_file(folder)
            stdout, err = proc.communicate(timeout=170)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        self.assertEqual(proc.returncode, 5, err)
        kept = sorted(p.name.split("-", 3)[3] for p in work.glob("ccbench-unsaved-*"))
        self.assertEqual(kept, ["c.alltoall.congested.json", "c.alltoall.isolated.json", "c.impact.json"])
        self.assertIn(f"{PREFIX}cannot write {out.parent}/c.impact.json: ", err)
        s = json.loads(next(work.glob("ccbench-unsaved-*-c.impact.json")).read_text())
        self.assertEqual(s["trials"], 30)
        self.assertEqual(s["impacts"][0]["impact_median"]["trials"], 30)


if __name__ == "__main__":
    unittest.main(verbosity=2)
