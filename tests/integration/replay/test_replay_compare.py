"""`ccbench compare --statistic step` on two real 2-rank replays of one trace under mpirun.

Both replays run on this machine, so no verdict is asserted; what is: the file records the trace's
SHA-256 (the sha256sum of its bytes), compare compares the step row alone, its ratio is the trial-level
one worked out here from the files' samples, the intervals hold the ratio, every verdict is the one its
own intervals give by docs/compare.md's rules, with the exit code that verdict has, and a replay of
another trace is refused (exit 2) naming its file.
"""
import hashlib
import json
import math
import os
import statistics
import subprocess
import tempfile
import unittest

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = os.environ.get("CCBENCH_SOURCE", ".")
DATA = os.path.join(SOURCE, "tests", "data", "replay")
TWO = os.path.join(DATA, "two_ranks.trace.json")
OTHER = os.path.join(DATA, "send_recv.trace.json")
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
EXIT = {"none": 0, "confirmed": 0, "pass": 0, "refuted": 1, "regression": 1, "inconclusive": 4}


def env():
    e = dict(os.environ)
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return e


def load(path):
    with open(path) as f:
        return json.load(f)


def step_trial_logs(doc):
    """log of each trial's median step sample, as compare reduces a trial."""
    return [math.log(statistics.median(r["samples_us"])) for r in doc["results"] if r["op"] == "replay_step"]


class StepOfTwoReplays(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory(prefix="ccbench_replay_compare_")
        cls.files = {}
        for name, trace in [("a", TWO), ("b", TWO), ("other", OTHER)]:
            out = os.path.join(cls.dir.name, f"{name}.json")
            p = subprocess.run(MPIRUN + ["-np", "2", CCBENCH, "replay", trace, "--steps", "10", "--trials", "5",
                                         "--gaps", "none", "-J", out], capture_output=True, text=True, timeout=60,
                               env=env())
            if p.returncode != 0:
                raise AssertionError(f"replay {trace}: exit {p.returncode}: {p.stderr[-2000:]}")
            cls.files[name] = out

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def compare(self, *args):
        p = subprocess.run([CCBENCH, "compare", self.files["a"], self.files["b"], "--statistic", "step",
                            "--format", "json", *args], capture_output=True, text=True, timeout=60)
        self.assertNotEqual(p.returncode, 2, p.stderr)
        j = json.loads(p.stdout)
        self.assertEqual(p.returncode, EXIT[j["verdict"]], j["reason"])
        self.assertEqual(j["exit_code"], p.returncode)
        return j

    def test_trace_digest_is_the_files_sha256(self):
        with open(TWO, "rb") as f:
            want = hashlib.sha256(f.read()).hexdigest()
        for name in ("a", "b"):
            self.assertEqual(load(self.files[name])["config"]["replay"]["trace_sha256"], want)

    def test_step_ratio_and_intervals(self):
        j = self.compare("--looks", "once")
        s = j["summary"]
        self.assertEqual((s["statistic"], s["metric"], s["sizes"], j["verdict"]), ("step", "time", 1, "none"))
        self.assertEqual([(r["op"], r["bytes"], r["ranks"]) for r in j["rows"]], [("replay_step", 8576, 2)])
        self.assertEqual(s["trials"], {"baseline": 5, "candidate": 5})
        a, b = step_trial_logs(load(self.files["a"])), step_trial_logs(load(self.files["b"]))
        self.assertAlmostEqual(math.log(s["ratio"]), statistics.mean(a) - statistics.mean(b), places=9)
        self.assertLessEqual(s["ci"][0], s["ci90"][0])
        self.assertLessEqual(s["ci90"][0], s["ratio"])
        self.assertLessEqual(s["ratio"], s["ci90"][1])
        self.assertLessEqual(s["ci90"][1], s["ci"][1])
        self.assertEqual(s["step"]["trace_sha256"], load(self.files["a"])["config"]["replay"]["trace_sha256"])

    def test_claim_verdict_follows_its_intervals(self):
        j = self.compare("--expect-speedup", "0%", "--tolerance", "5%")
        lo, hi = j["claim"]["band"]
        ci, ci90 = j["summary"]["ci"], j["summary"]["ci90"]
        if j["summary"]["drift_changed_verdict"]:
            want = "inconclusive"  # a drift across the trials that could decide it (compare.md "Drift")
        elif lo <= ci90[0] and ci90[1] <= hi:
            want = "confirmed"
        elif ci[0] > hi or ci[1] < lo:
            want = "refuted"
        else:
            want = "inconclusive"
        self.assertEqual(j["verdict"], want, j["reason"])

    def test_gate_tests_the_step_alone(self):
        j = self.compare("--gate", "regression", "--threshold", "5%", "--looks", "once")
        (r,) = j["rows"]
        self.assertEqual(r["p_holm"], r["p_gate"])
        self.assertEqual(r["regression"], r["p_gate"] < 0.05)
        if j["summary"]["drift_changed_verdict"]:  # a drift that alone could explain the failure
            self.assertEqual((j["verdict"], r["regression"]), ("inconclusive", True), j["reason"])
        else:
            self.assertEqual(j["verdict"], "regression" if r["regression"] else "pass", j["reason"])

    def test_replay_of_another_trace_is_refused(self):
        p = subprocess.run([CCBENCH, "compare", self.files["a"], self.files["other"], "--statistic", "step"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stdout)
        self.assertIn(f"--statistic step: {self.files['other']} replayed another trace than {self.files['a']}",
                      p.stderr)


if __name__ == "__main__":
    unittest.main()
