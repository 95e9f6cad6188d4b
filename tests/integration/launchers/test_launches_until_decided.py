#!/usr/bin/python3
"""scripts/launches.sh --until-decided (issue 28 item 2): real launches (mpirun, ccbench run, one rank,
a tiny sweep) alternate between the sides, compare runs after every pair from 5 a side under its
sequential rule, and the loop stops at the first decided verdict or at --max-launches; launches
already in the folders count and are never overwritten; bad options are exit 2 naming the option,
before anything is launched. Also compare's --looks: the rule every verdict names.

Usage: test_launches_until_decided.py SOURCE_DIR CCBENCH
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = None
CCBENCH = None
RUN_FLAGS = ["--", "--ops", "allreduce", "-b", "8", "-e", "64", "-n", "10", "-w", "1", "--in-place", "no"]
# A/A against "300% faster" (band [3.95, 4.05]): no real noise brings a ratio near 4, so the claim is
# refuted at the first look whatever the machine is doing.
FAR_CLAIM = "--expect-speedup 300%"


def launches(*args, timeout=240):
    env = dict(os.environ, CCBENCH=CCBENCH, NP="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    return subprocess.run([os.path.join(SOURCE, "scripts", "launches.sh"), *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def files(folder):
    return sorted(f for f in os.listdir(folder) if re.fullmatch(r"launch-\d{3}\.json", f))  # not the .jsonl streams


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class UntilDecided(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ccbench-until-")
        cls.base, cls.cand = os.path.join(cls.tmp, "A"), os.path.join(cls.tmp, "B")
        cls.first = launches("--until-decided", cls.base, cls.cand, "--compare", FAR_CLAIM, *RUN_FLAGS)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_refuted_at_the_first_look_after_five_alternating_pairs(self):
        r = self.first
        self.assertEqual(r.returncode, 1, r.stdout[-3000:] + r.stderr[-2000:])
        self.assertEqual(files(self.base), [f"launch-{i:03d}.json" for i in range(1, 6)])
        self.assertEqual(files(self.cand), [f"launch-{i:03d}.json" for i in range(1, 6)])
        order = re.findall(r"^launches\.sh: (baseline|candidate) launch (\d+) ->", r.stdout, re.M)
        self.assertEqual(order, [(side, str(i)) for i in range(1, 6) for side in ("baseline", "candidate")])
        self.assertEqual(len(re.findall(r"^launches\.sh: compare after", r.stdout, re.M)), 1, r.stdout)
        self.assertIn("launches.sh: decided after 5 and 5 launches (compare exit 1)", r.stdout)
        self.assertRegex(r.stdout, r"verdict: refuted \(exit 1\): .*looks: sequential")

    def test_stops_at_max_launches_and_keeps_the_launches_there(self):
        base, cand = os.path.join(self.tmp, "A2"), os.path.join(self.tmp, "B2")
        shutil.copytree(self.base, base)
        shutil.copytree(self.cand, cand)
        before = {f: digest(os.path.join(base, f)) for f in files(base)}
        # --min-trials 7: no verdict is possible at 5 or 6 launches a side, so the loop runs to the cap.
        r = launches("--until-decided", base, cand, "--max-launches", "6", "--compare", FAR_CLAIM + " --min-trials 7",
                     *RUN_FLAGS)
        self.assertEqual(r.returncode, 4, r.stdout[-3000:] + r.stderr[-2000:])
        self.assertEqual(len(files(base)), 6)
        self.assertEqual(len(files(cand)), 6)
        self.assertEqual({f: digest(os.path.join(base, f)) for f in before}, before)
        self.assertEqual(re.findall(r"^launches\.sh: (baseline|candidate) launch (\d+) ->", r.stdout, re.M),
                         [("baseline", "6"), ("candidate", "6")])
        self.assertEqual(len(re.findall(r"^launches\.sh: compare after", r.stdout, re.M)), 2, r.stdout)
        self.assertIn("still inconclusive at --max-launches 6 a side (compare exit 4)", r.stdout)

    def test_bad_options_are_exit_2_naming_them_before_any_launch(self):
        base, cand = os.path.join(self.tmp, "X"), os.path.join(self.tmp, "Y")
        cases = [
            (["--compare", FAR_CLAIM + " --looks once"], "--looks once"),
            (["--compare", FAR_CLAIM, "--max-launches", "1"], "--max-launches"),
            (["--compare", FAR_CLAIM, "--min-launches", "x"], "--min-launches"),
            (["--compare", FAR_CLAIM, "--min-launches", "9", "--max-launches", "8"], "--min-launches"),
            (["--compare", "--min-trials 5"], "--compare"),
            ([], "--compare"),
            (["--compare", FAR_CLAIM, "--pairs", "3"], "--pairs"),
            (["--compare"], "--compare"),
        ]
        for extra, named in cases:
            r = launches("--until-decided", base, cand, *extra, *RUN_FLAGS, timeout=30)
            self.assertEqual(r.returncode, 2, f"{extra}: {r.stdout} {r.stderr}")
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, f"{extra}: {r.stderr}")
            self.assertIn(named, lines[0], extra)
            self.assertEqual(r.stdout, "", extra)
            self.assertFalse(os.path.exists(base) or os.path.exists(cand), extra)

    def test_compare_names_its_rule_in_every_form(self):
        def compare(*args):
            return subprocess.run([CCBENCH, "compare", self.base, self.cand, "--expect-speedup", "300%", *args],
                                  capture_output=True, text=True, timeout=60)
        seq = compare("--format", "json")
        self.assertEqual(seq.returncode, 1, seq.stderr)
        j = json.loads(seq.stdout)
        self.assertEqual(j["summary"]["looks"], "sequential")
        self.assertEqual(j["summary"]["boundary"]["first_look"], 5)
        self.assertEqual(j["summary"]["boundary"]["last_look"], 20)
        self.assertEqual(j["summary"]["boundary"]["look"], 5)
        self.assertAlmostEqual(j["summary"]["boundary"]["level"]["ci"], 0.013752, delta=1e-6)  # the first look
        self.assertIn("looks: sequential", j["reason"])
        once = compare("--format", "json", "--looks", "once")
        self.assertEqual(once.returncode, 1, once.stderr)
        j = json.loads(once.stdout)
        self.assertEqual(j["summary"]["looks"], "once")
        self.assertIsNone(j["summary"]["boundary"])
        self.assertIn("looks: once", j["reason"])
        for fmt in ("text", "markdown"):
            r = compare("--format", fmt)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("looks: sequential", r.stdout, fmt)
        bad = compare("--looks", "twice")
        self.assertEqual(bad.returncode, 2)
        self.assertEqual(bad.stdout, "")
        self.assertEqual(len(bad.stderr.strip().splitlines()), 1, bad.stderr)
        self.assertIn("--looks", bad.stderr)


if __name__ == "__main__":
    SOURCE, CCBENCH = sys.argv.pop(1), sys.argv.pop(1)
    unittest.main()
