#!/usr/bin/env python3
"""`ccbench help`: the command list with one-line summaries; `ccbench help COMMAND [SUB]` prints
exactly what `ccbench COMMAND [SUB] --help` prints (the same flag definitions; a measuring
command's from its row's flag set, without starting ccbench-measure); `ccbench help --markdown
COMMAND` is a measuring command's flag reference; an unknown command is exit 2 naming it. The
commands come from `ccbench --help` itself.

usage: test_help.py BUILD_DIR
"""
import os
import re
import subprocess
import sys
import unittest
from pathlib import Path

BUILD = Path(sys.argv.pop(1)).resolve() if len(sys.argv) > 1 else Path("build").resolve()
CCBENCH = BUILD / "ccbench"
TIMEOUT_S = 60


def run(*args, env=None):
    return subprocess.run([CCBENCH, *args], capture_output=True, text=True, timeout=TIMEOUT_S, env=env)


def help_flags(help_text):
    """The option names of a CLI11 help ("-b,--min-bytes" as "-b, --min-bytes"), in order."""
    return [m.group(1).replace(",", ", ") for m in re.finditer(r"^  (-\S+)", help_text, re.M)]


def markdown_flags(table):
    """The first cell of each flag row of `ccbench help --markdown`, backticks dropped."""
    return [line.split(" | ")[0][2:].replace("`", "") for line in table.splitlines()
            if line.startswith("| `") and "(positional)" not in line]


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
        self.assertEqual(set(subcommands), {"fit", "predict", "plan", "checkpoint", "check"})
        for sub in subcommands:
            with self.subTest(subcommand=sub):
                direct, via_help = run("model", sub, "--help"), run("help", "model", sub)
                self.assertEqual(via_help.returncode, 0, via_help.stderr)
                self.assertEqual(via_help.stdout, direct.stdout)
                self.assertIn(f"ccbench model {sub}", via_help.stdout)

    def test_measuring_help_is_printed_without_ccbench_measure(self):
        # The row's flag set is in ccbench itself: with no ccbench-measure to exec, help still prints.
        env = dict(os.environ, CCBENCH_MEASURE="/nonexistent/ccbench-measure")
        for name in ("run", "fabric", "info", "congestion", "checkpoint", "replay"):
            with self.subTest(command=name):
                p, direct = run("help", name, env=env), run(name, "--help")
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stderr, "")
                self.assertEqual(p.stdout, direct.stdout)

    def test_markdown_is_the_flag_reference_of_the_commands_flags(self):
        for name in ("run", "fabric", "info", "congestion", "checkpoint", "replay"):
            with self.subTest(command=name):
                p = run("help", "--markdown", name)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stderr, "")
                self.assertEqual(p.stdout.splitlines()[0], f"# ccbench {name}")
                self.assertIn("| flag | value | default | meaning |\n|---|---|---|---|\n", p.stdout)
                self.assertEqual(markdown_flags(p.stdout), help_flags(run(name, "--help").stdout))
        run_table = run("help", "--markdown", "run").stdout
        self.assertIn("| `--timing` | TEXT | ccbench | ccbench \\| nccl-tests (back-to-back, mean over ranks) |\n",
                      run_table)
        self.assertIn("| `-b`, `--min-bytes` | TEXT | 8 | smallest size (K/M/G/T = powers of 1024) |\n", run_table)
        self.assertIn("| `--per-rank` |  |  | each rank's median op time and last arrivals in every row |\n", run_table)
        replay_table = run("help", "--markdown", "replay").stdout
        self.assertIn("| `trace` (positional) | TEXT |  | the trace (ccbench trace import ... --out TRACE.json) "
                      "(required) |\n", replay_table)

    def test_markdown_takes_one_measuring_command(self):
        for args, says in ((["compare"], "not 'compare'"), (["run", "extra"], "not 'extra'"),
                           ([], "name a measuring command")):
            with self.subTest(args=args):
                p = run("help", "--markdown", *args)
                self.assertEqual(p.returncode, 2)
                self.assertEqual(p.stdout, "")
                self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
                self.assertTrue(p.stderr.startswith("ccbench help --markdown: "), p.stderr)
                self.assertIn(says, p.stderr)
        p = run("help", "--markdown", "no-such-command")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.splitlines()[0], "ccbench help: unknown command 'no-such-command'")

    def test_unknown_command_is_exit_2_naming_it(self):
        p = run("help", "no-such-command")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, "")
        self.assertEqual(p.stderr.splitlines()[0], "ccbench help: unknown command 'no-such-command'")
        self.assertIn("commands:", p.stderr)


if __name__ == "__main__":
    unittest.main()
