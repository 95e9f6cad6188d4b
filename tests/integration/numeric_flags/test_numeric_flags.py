#!/usr/bin/python3
"""Every floating-point flag of run, fabric, compare and import refuses nan, inf and out-of-range
numbers with exit 2 and a message naming the flag, before touching any file (one validated parser,
core/numbers.hpp). Usage: test_numeric_flags.py PATH_TO_ccbench"""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

CCBENCH = None


def run(*args):
    p = subprocess.run([CCBENCH, *map(str, args)], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stderr


class NumericFlags(unittest.TestCase):
    def test_measuring_commands(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "x.json"
            for cmd, flag, name in [("run", "-T", "--timeout"), ("run", "--link-gbps", "--link-gbps"),
                                    ("run", "-f", "--step-factor"), ("run", "--max-time-per-size", None),
                                    ("fabric", "-T", "--timeout"), ("fabric", "-f", "--step-factor"),
                                    ("fabric", "--max-time-per-size", None)]:
                for value in ["nan", "inf", "-inf", "1e999"]:
                    code, err = run(cmd, flag, value, "-J", out)
                    self.assertEqual(code, 2, (cmd, flag, value, err))
                    self.assertIn(f"{name or flag}: '{value}' is not a finite number", err, (cmd, flag))
                    self.assertFalse(out.exists())
            for cmd in ("run", "fabric"):
                code, err = run(cmd, "--target-ci", "nan", "-J", out)
                self.assertEqual(code, 2, err)
                self.assertIn("--target-ci: 'nan' is not a fraction (write 1% or 0.01)", err)


if __name__ == "__main__":
    CCBENCH = sys.argv.pop(1)
    unittest.main()
