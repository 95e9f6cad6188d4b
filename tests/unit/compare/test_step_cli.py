#!/usr/bin/python3
"""`ccbench compare --statistic step` on hand-made `ccbench replay` result files with known answers.

Each side is 5 launches (one file each) of a replay: a call-site row and the step row (`op`
replay_step). A launch's step samples are its median times 0.97 ... 1.03, and the 5 launch medians of
a side are its step time times 0.98, 0.99, 1.00, 1.01, 1.02 in some order, the same set on both
sides, so the trial-level log ratio is exactly log(baseline step / candidate step) and its Welch t
interval (equal spreads: df 8) is worked out below with SciPy's t quantile, as docs/compare.md's
"Method" defines it. `--looks once` keeps the one-look levels (0.05 a side for the 90% interval).

Usage: test_step_cli.py PATH_TO_ccbench
"""
import json
import math
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_results as gen  # noqa: E402

CCBENCH = None
DIGEST = "ab" * 32  # a trace's SHA-256 as replay records it
OTHER_DIGEST = "cd" * 32
LAUNCH_FACTORS = {"baseline": [0.99, 1.01, 1.00, 0.98, 1.02], "candidate": [1.00, 1.02, 0.99, 1.01, 0.98]}
SAMPLE_FACTORS = [0.97, 0.98, 0.99, 1.00, 1.01, 1.02, 1.03]
STEP_US = 100.0


def run(*args):
    p = subprocess.run([CCBENCH, *map(str, args)], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def row(op, dtype, nbytes, count, median_us, kind, trial=0):
    samples = [median_us * f for f in SAMPLE_FACTORS]
    replay = {"kind": kind, "calls": count if kind == "step" else 2}
    replay.update({"sites": 1, "steps": len(samples)} if kind == "step" else
                  {"site": 0, "group": "world", "fraction_of_step": 0.5})
    return {"op": op, "backend": "mpi", "dtype": dtype, "redop": "sum" if op == "allreduce" else "none",
            "in_place": False, "root": -1, "bytes": nbytes, "count": count, "ranks": 2, "trial": trial,
            "samples_us": samples, "batch": 1, "samples_kind": "raw",
            "time_us": {"min": samples[0], "median": median_us, "mean": sum(samples) / len(samples),
                        "p99": samples[-1], "max": samples[-1], "ci95": [samples[0], samples[-1]]},
            "algbw_gbps": 0.0, "busbw_gbps": 0.0, "wrong": 0, "ci_target_met": False, "replay": replay}


def replay_file(step_us, digest=DIGEST, trace="job.trace.json"):
    doc = gen.make_file(ops=("allreduce",), sizes=[4096], trials=1, ranks=2, ranks_per_node=2)
    doc["config"] = {"backend": "mpi", "dtype": "float", "redop": "sum", "timing": {"method": "ccbench"},
                     "iters": "auto", "warmup": 0, "trials": 1,
                     "replay": {"trace": trace, "trace_world_size": 2, "ranks_map": [0, 1], "copies": 1,
                                "gaps": "none", "steps": len(SAMPLE_FACTORS), "traced_steps": 1, "sites": 1}}
    if digest is not None:
        doc["config"]["replay"]["trace_sha256"] = digest
    doc["run"]["command"] = ["ccbench", "replay", trace]
    doc["results"] = [row("allreduce", "float", 4096, 1024, step_us / 2, "call_site"),
                      row("replay_step", "none", 8192, 2, step_us, "step")]
    return doc


def write_side(folder, side, step_us, **kw):
    for i, f in enumerate(LAUNCH_FACTORS[side]):
        gen.write(folder / f"launch-{i + 1:03d}.json", replay_file(step_us * f, **kw))
    return folder


def welch_interval(ratio, confidence):
    """The t interval of the log ratio: both sides' log launch medians have the same spread."""
    logs = [math.log(f) for f in LAUNCH_FACTORS["baseline"]]
    mean = sum(logs) / len(logs)
    var = sum((v - mean) ** 2 for v in logs) / (len(logs) - 1)
    se = math.sqrt(2 * var / len(logs))
    w = stats.t.ppf(0.5 + confidence / 2, 2 * len(logs) - 2) * se
    return [ratio * math.exp(-w), ratio * math.exp(w)]


class StepCompare(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="ccbench-step-cli-"))
        t = cls.tmp
        write_side(t / "base", "baseline", STEP_US)
        write_side(t / "fast", "candidate", STEP_US * 0.8)   # 20% less time a step: ratio 1.25
        write_side(t / "same", "candidate", STEP_US)
        write_side(t / "slow", "candidate", STEP_US * 1.25)  # 25% more: ratio 0.8
        write_side(t / "other", "candidate", STEP_US * 0.8, digest=OTHER_DIGEST, trace="other.trace.json")
        write_side(t / "nodigest", "candidate", STEP_US, digest=None)
        gen.write(t / "run.json", gen.make_file(ops=("allreduce",), sizes=[4096], trials=5, ranks=2, ranks_per_node=2))
        # "At least 10% faster": the band's lower edge 1.10 (up to 40% faster).
        (t / "claim.yaml").write_text('statement: "the step is at least 10% faster"\nexpected_speedup: 25%\n'
                                      'tolerance: 15%\nstatistic: step\n')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def compare(self, base, cand, *args):
        code, out, err = run("compare", self.tmp / base, self.tmp / cand, "--statistic", "step", "--looks", "once",
                             "--format", "json", *args)
        self.assertNotEqual(code, 2, err)
        j = json.loads(out)
        self.assertEqual(j["exit_code"], code)
        return code, j

    def test_twenty_percent_faster_confirms_at_least_ten(self):
        code, j = self.compare("base", "fast", "--expect-speedup", "25%", "--tolerance", "15%")
        self.assertEqual((code, j["verdict"]), (0, "confirmed"), j["reason"])
        s = j["summary"]
        self.assertEqual((s["statistic"], s["metric"], s["sizes"]), ("step", "time", 1))
        self.assertEqual([(r["op"], r["bytes"]) for r in j["rows"]], [("replay_step", 8192)])
        self.assertAlmostEqual(s["ratio"], 1.25, places=12)
        for got, want in zip(s["ci90"], welch_interval(1.25, 0.90)):
            self.assertAlmostEqual(got, want, places=9)
        for got, want in zip(s["ci"], welch_interval(1.25, 0.95)):
            self.assertAlmostEqual(got, want, places=9)
        self.assertEqual(s["step"]["trace_sha256"], DIGEST)
        self.assertEqual((s["step"]["ratio"], s["step"]["ci90"]), (s["ratio"], s["ci90"]))
        self.assertEqual(j["claim"]["band"], [1.10, 1.40])
        self.assertIn("lies inside the claim band [1.100, 1.400]", j["reason"])

    def test_claim_file_with_statistic_step(self):
        code, j = self.compare("base", "fast", "--claim", self.tmp / "claim.yaml")
        self.assertEqual((code, j["verdict"], j["claim"]["statistic"]), (0, "confirmed", "step"), j["reason"])
        # Without --statistic on the command line the claim file's statistic decides.
        code, out, err = run("compare", self.tmp / "base", self.tmp / "fast", "--claim", self.tmp / "claim.yaml",
                             "--format", "json")
        self.assertEqual(code, 0, err)
        self.assertEqual(json.loads(out)["summary"]["statistic"], "step")

    def test_equal_steps_refute_at_least_ten(self):
        code, j = self.compare("base", "same", "--expect-speedup", "25%", "--tolerance", "15%")
        self.assertEqual((code, j["verdict"]), (1, "refuted"), j["reason"])
        self.assertAlmostEqual(j["summary"]["ratio"], 1.0, places=12)
        self.assertIn("lies wholly below the claim band [1.100, 1.400]", j["reason"])
        # And a claim of no change: confirmed (the 90% CI inside [0.95, 1.05]).
        code, j = self.compare("base", "same", "--expect-speedup", "0%", "--tolerance", "5%")
        self.assertEqual((code, j["verdict"]), (0, "confirmed"), j["reason"])

    def test_gate_on_the_step(self):
        code, j = self.compare("base", "same", "--gate", "regression", "--threshold", "5%")
        self.assertEqual((code, j["verdict"]), (0, "pass"), j["reason"])
        code, j = self.compare("base", "slow", "--gate", "regression", "--threshold", "10%")
        self.assertEqual((code, j["verdict"]), (1, "regression"), j["reason"])
        self.assertAlmostEqual(j["summary"]["ratio"], 0.8, places=12)
        (r,) = j["rows"]
        self.assertTrue(r["regression"])
        # The step row is the whole family: its Holm-adjusted p is its own one-sided p (the geomean over
        # the one row is the same test, not counted twice), and only the step is named.
        self.assertEqual(r["p_holm"], r["p_gate"])
        self.assertFalse(j["gate"]["geomean_regression"])
        self.assertEqual(len(j["gate"]["failures"]), 1)
        self.assertIn("replay_step 8K none is 25.0% slower", j["gate"]["failures"][0])

    def test_text_names_the_step(self):
        code, out, err = run("compare", self.tmp / "base", self.tmp / "fast", "--statistic", "step", "--looks", "once",
                             "--expect-speedup", "25%", "--tolerance", "15%")
        self.assertEqual(code, 0, err)
        self.assertIn("step (communication time per step, baseline/candidate): 1.250x", out)
        self.assertIn("<- claim statistic", out)
        self.assertIn(f"trace: sha256 {DIGEST} (both sides)", out)
        self.assertNotIn("geomean over", out)

    def test_different_traces_exit_2_naming_the_file(self):
        code, out, err = run("compare", self.tmp / "base", self.tmp / "other", "--statistic", "step")
        self.assertEqual(code, 2, out)
        self.assertEqual(err.count("\n"), 1, err)
        first_other = self.tmp / "other" / "launch-001.json"
        self.assertIn(f"{first_other} replayed another trace than {self.tmp / 'base' / 'launch-001.json'}", err)
        self.assertIn(f"trace_sha256 {OTHER_DIGEST} vs {DIGEST}", err)
        self.assertIn("traces other.trace.json and job.trace.json", err)

    def test_files_that_are_not_replays_exit_2(self):
        code, _, err = run("compare", self.tmp / "base", self.tmp / "run.json", "--statistic", "step")
        self.assertEqual(code, 2)
        self.assertIn(f"--statistic step: {self.tmp / 'run.json'}: no replay_step row", err)
        code, _, err = run("compare", self.tmp / "base", self.tmp / "nodigest", "--statistic", "step")
        self.assertEqual(code, 2)
        self.assertIn(f"{self.tmp / 'nodigest' / 'launch-001.json'}: no config.replay.trace_sha256", err)

    def test_scope_flags_and_busbw_refused(self):
        for flags, named in [(["--ops", "allreduce"], "--ops"), (["--min-bytes", "1K"], "--min-bytes"),
                             (["--metric", "busbw"], "--metric busbw")]:
            code, _, err = run("compare", self.tmp / "base", self.tmp / "fast", "--statistic", "step", *flags)
            self.assertEqual(code, 2, flags)
            self.assertIn(named, err)

    def test_without_statistic_step_every_row_compares_as_before(self):
        # Today's comparison: call-site rows and the step row are keys alike, in the geomean and the max.
        code, out, err = run("compare", self.tmp / "base", self.tmp / "fast", "--format", "json")
        self.assertEqual(code, 0, err)
        j = json.loads(out)
        self.assertEqual(j["summary"]["statistic"], "geomean")
        self.assertEqual(sorted(r["op"] for r in j["rows"]), ["allreduce", "replay_step"])
        self.assertNotIn("step", j["summary"])


if __name__ == "__main__":
    CCBENCH = sys.argv.pop(1)
    unittest.main(verbosity=2)
