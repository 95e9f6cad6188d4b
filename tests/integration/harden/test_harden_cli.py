#!/usr/bin/python3
"""Issue 15 from the command line, no MPI: each bad input is exit 2 with a one-line message naming
what is wrong, output keeps symlinks and devices, a busy host is named by report and compare, and
the scripts validate numbers before arithmetic.

Usage: test_harden_cli.py PATH_TO_ccbench
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

CCBENCH = None
ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
CLAIMS = ROOT / "configs" / "claims"


def run(*args, env=None, cwd=None):
    p = subprocess.run([CCBENCH, *map(str, args)], capture_output=True, text=True, timeout=120, env=env, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def result_file(host_load=None, label="x"):
    d = json.loads((DATA / "report" / "local-mpi.json").read_text())
    d["run"]["label"] = label
    if host_load is not None:
        d["system"]["host_load"] = host_load
    return d


BUSY = {"window_s": 10.0, "cpus_online": 2, "cores": [0, 1], "load_avg_1m": {"start": 0.5, "end": 3.5},
        "steal_share": 0.0, "others_core_share": 0.45, "others_top": [{"pid": 9, "name": "stress-ng", "core_share": 0.9}]}
BUSY_NOTE = "host busy: other processes used 45% of the ranks' 2 cores (stress-ng 90%); steal 0%; load average 0.5 -> 3.5"


class Harden(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="ccbench-harden-cli-"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_claim_fifo_is_refused_without_hanging(self):
        fifo = self.tmp / "claim-fifo.yaml"
        os.mkfifo(fifo)
        base = DATA / "report" / "local-mpi.json"
        code, _, err = run("compare", base, base, "--claim", fifo)
        self.assertEqual(code, 2, err)
        self.assertIn(f"{fifo}: is a FIFO (named pipe), not a regular file", err)

    def test_file_names_with_commas(self):
        d = self.tmp / "commas"
        d.mkdir()
        a = d / "base,v1.json"
        b = d / "cand,v1.json"
        a.write_text(json.dumps(result_file()))
        b.write_text(json.dumps(result_file()))
        # A path that exists is taken whole.
        code, out, err = run("compare", a, b, "--format", "json", "--resamples", "200")
        self.assertNotEqual(code, 2, err)
        self.assertEqual(json.loads(out)["inputs"], {"baseline": [str(a)], "candidate": [str(b)]})
        # A list with escaped commas (two files: one file twice is refused, each launch counts once).
        code, out, err = run("compare", f"{d}/base\\,v1.json,{d}/cand\\,v1.json", b, "--format", "json",
                             "--resamples", "200")
        self.assertNotEqual(code, 2, err)
        self.assertEqual(json.loads(out)["inputs"]["baseline"], [str(a), str(b)])
        code, _, err = run("compare", f"{d}/base\\,v1.json,{d}/base\\,v1.json", b)
        self.assertEqual(code, 2, err)
        self.assertIn(f"baseline side: {a} is read twice", err)
        code, _, err = run("compare", f"{d}/nope,{a}", b)
        self.assertEqual(code, 2)
        self.assertIn(f"{d}/nope: no such file or folder", err)

    def test_out_keeps_a_symlink_and_writes_its_target(self):
        d = self.tmp / "link"
        d.mkdir()
        target = d / "real.md"
        target.write_text("old")
        link = d / "report.md"
        link.symlink_to("real.md")
        code, _, err = run("report", DATA / "report" / "local-mpi.json", "--format", "markdown", "--out", link)
        self.assertEqual(code, 0, err)
        self.assertTrue(link.is_symlink())
        self.assertTrue(target.read_text().startswith("## ccbench report"))

    def test_out_to_a_device_writes_through_it(self):
        code, _, err = run("report", DATA / "report" / "local-mpi.json", "--format", "csv", "--out", "/dev/null")
        self.assertEqual(code, 0, err)
        self.assertTrue(Path("/dev/null").is_char_device())
        # /dev/stdout (a symlink to /proc/self/fd/1, here a pipe): the text arrives on stdout.
        code, out, err = run("report", DATA / "report" / "local-mpi.json", "--format", "csv", "--out", "/dev/stdout")
        self.assertEqual(code, 0, err)
        self.assertTrue(out.startswith("file,label,op,backend,"), out[:200])

    def test_busy_host_in_report_and_compare(self):
        d = self.tmp / "busy"
        d.mkdir()
        busy = d / "busy.json"
        quiet = d / "quiet.json"
        busy.write_text(json.dumps(result_file(BUSY, label="busy")))
        quiet.write_text(json.dumps(result_file({**BUSY, "others_core_share": 0.01, "others_top": []}, label="quiet")))
        code, out, err = run("report", busy)
        self.assertEqual(code, 0, err)
        self.assertIn("# " + BUSY_NOTE + "\n", out)
        code, out, _ = run("report", quiet)
        self.assertNotIn("host busy", out)
        code, out, err = run("report", busy, "--format", "markdown")
        self.assertIn("> ⚠ busy: " + BUSY_NOTE, out)
        code, out, err = run("compare", quiet, busy, "--format", "json", "--resamples", "200")
        self.assertNotEqual(code, 2, err)
        warnings = json.loads(out)["warnings"]
        self.assertIn(f"candidate run {busy}: {BUSY_NOTE}: its times may reflect the other work, not the network",
                      warnings)
        self.assertFalse(any("baseline run" in w and "host busy" in w for w in warnings), warnings)

    def test_shell_numbers_are_validated_before_arithmetic(self):
        marker = self.tmp / "pwned"
        evil = f"x[$(touch {marker})]"
        env = dict(os.environ, NP=evil, CCBENCH=CCBENCH)
        p = subprocess.run([ROOT / "scripts/ci/regression.sh", "name"], capture_output=True, text=True, env=env,
                           timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"regression.sh: NP must be a positive whole number, got '{evil}'", p.stderr)
        p = subprocess.run([ROOT / "scripts/emulate/migrate.sh", "--hosts", evil], capture_output=True, text=True,
                           env=dict(os.environ, CCBENCH=CCBENCH), timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"migrate.sh: --hosts must be a whole number 1..64, got '{evil}'", p.stderr)
        if os.geteuid() == 0:  # fabric.sh checks for root first
            p = subprocess.run([ROOT / "scripts/emulate/fabric.sh", "run", "--hosts", evil], capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(f"--hosts must be a whole number 1..64, got '{evil}'", p.stderr)
            p = subprocess.run([ROOT / "scripts/emulate/fabric.sh", "link", "down", evil], capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
        self.assertFalse(marker.exists(), "a command hidden in a number ran")


if __name__ == "__main__":
    CCBENCH = sys.argv.pop(1)
    unittest.main(verbosity=2)
