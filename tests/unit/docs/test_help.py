#!/usr/bin/env python3
"""`ccbench help`: the command list with one-line summaries; `ccbench help COMMAND [SUB]` prints
exactly what `ccbench COMMAND [SUB] --help` prints (the same flag definitions); an unknown command
is exit 2 naming it. The commands come from `ccbench --help` itself.

usage: test_help.py BUILD_DIR
"""
import subprocess
import sys
import unittest
from pathlib import Path

BUILD = Path(sys.argv.pop(1)).resolve() if len(sys.argv) > 1 else Path("build").resolve()
CCBENCH = BUILD / "ccbench"
TIMEOUT_S = 60


def run(*args):
    return subprocess.run([CCBENCH, *args], capture_output=True, text=True, timeout=TIMEOUT_S)


def listed(usage_text, heading):
    """{name: summary} under 'heading:' of a usage text, up to the blank line."""
    names, inside = {}, False
    for line in usage_text.splitlines():
        if line.strip() == heading:
            inside = True
        elif inside and not line.strip():
            break
        elif inside:
            name, _, summary = line.strip().partition(" ")
            names[name] = summary.strip()
    return names


class Help(unittest.TestCase):
    def setUp(self):
        usage = run("--help")
        self.assertEqual(usage.returncode, 0, usage.stderr)
        self.usage = usage.stdout
        self.commands = listed(self.usage, "commands:")

    def test_help_alone_lists_every_command_with_its_summary(self):
        p = run("help")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, self.usage)
        self.assertEqual(p.stderr, "")
        # The measuring commands (in ccbench-measure) and the others are all listed.
        for name in ("run", "fabric", "info", "congestion", "checkpoint", "compare", "report", "import", "model",
                     "screen"):
            self.assertIn(name, self.commands)
        for name, summary in self.commands.items():
            self.assertTrue(summary, f"{name} has no summary")
        self.assertIn("ccbench help <command>", self.usage)

    def test_help_command_is_the_commands_own_help(self):
        for name in self.commands:
            with self.subTest(command=name):
                direct, via_help = run(name, "--help"), run("help", name)
                self.assertEqual(direct.returncode, 0, direct.stderr)
                self.assertEqual(via_help.returncode, 0, via_help.stderr)
                self.assertEqual(via_help.stdout, direct.stdout)
                self.assertIn(f"ccbench {name}", via_help.stdout)

    def test_help_subcommand_is_the_subcommands_own_help(self):
        model = run("model", "--help")
        subcommands = listed(model.stdout, "subcommands:")
        self.assertEqual(set(subcommands), {"fit", "predict", "plan", "checkpoint"})
        for sub in subcommands:
            with self.subTest(subcommand=sub):
                direct, via_help = run("model", sub, "--help"), run("help", "model", sub)
                self.assertEqual(via_help.returncode, 0, via_help.stderr)
                self.assertEqual(via_help.stdout, direct.stdout)
                self.assertIn(f"ccbench model {sub}", via_help.stdout)

    def test_unknown_command_is_exit_2_naming_it(self):
        p = run("help", "no-such-command")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, "")
        self.assertEqual(p.stderr.splitlines()[0], "ccbench help: unknown command 'no-such-command'")
        self.assertIn("commands:", p.stderr)


if __name__ == "__main__":
    unittest.main()
