#!/usr/bin/env python3
"""Every flag a command's --help prints appears in that command's doc page (docs/COMMAND.md).

The command list comes from the binaries themselves: `ccbench --help` (every command) and
`ccbench-measure --help` (the measuring ones, which `ccbench CMD` execs), and `ccbench model --help`
for model's subcommands. A measuring command's flags are read from its row's flag set,
`ccbench help --markdown CMD` (the declarations its parse uses and its --help prints: the unit test
flag_sets.AreWhatCcbenchMeasurePrintsForHelp holds the two equal). A flag is its long name (`--min-bytes`), or its short one where it has no
long name; `--help` itself is left out. The doc must name the flag as a whole word: `--trial` in the
text does not count for `--trials`.

usage: check_flags.py BUILD_DIR DOCS_DIR [--self-test]
exit 0: every flag documented; 1: the missing ones, one line each, naming command, flag and page.
--self-test: on a copy of DOCS_DIR with one flag of `ccbench run`'s row taken out of run.md, the check
must fail naming exactly that flag.
"""
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TIMEOUT_S = 60
# A CLI11 option line: two spaces, then "-x,--long" or "--long" (then a type, a default, text).
OPTION_LINE = re.compile(r"^  (-[A-Za-z0-9](?:,--[A-Za-z0-9][-A-Za-z0-9_]*)?|--[A-Za-z0-9][-A-Za-z0-9_]*)(?:[ =]|$)")


def run_help(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
    if p.returncode != 0:
        sys.exit(f"check_flags: {' '.join(map(str, argv))} exited {p.returncode}: {p.stderr.strip()[:200]}")
    return p.stdout


def listed(usage_text, heading):
    """Names under 'heading:' of a usage text ('commands:', 'subcommands:'), up to the blank line."""
    names, inside = [], False
    for line in usage_text.splitlines():
        if line.strip() == heading:
            inside = True
        elif inside and not line.strip():
            break
        elif inside:
            names.append(line.split()[0])
    return names


def flags(help_text):
    found = []
    for line in help_text.splitlines():
        m = OPTION_LINE.match(line)
        if not m:
            continue
        names = m.group(1).split(",")
        flag = names[-1]
        if flag != "--help":
            found.append(flag)
    return found


def row_flags(markdown):
    """The flags of a flag set's Markdown reference (`ccbench help --markdown CMD`): each table row's
    last name in its first cell, as flags() takes the long name; positionals are not flags."""
    found = []
    for line in markdown.splitlines():
        if not line.startswith("| `"):
            continue
        first = line.split(" | ")[0]
        if first.endswith("(positional)"):
            continue
        flag = re.findall(r"`([^`]+)`", first)[-1]
        if flag != "--help":
            found.append(flag)
    return found


def documented(flag, doc_text):
    return re.search(r"(?<![-\w])" + re.escape(flag) + r"(?![-\w])", doc_text) is not None


def self_test(build, docs):
    flag = row_flags(run_help([build / "ccbench", "help", "--markdown", "run"]))[-1]
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "docs"
        shutil.copytree(docs, copy)
        page = copy / "run.md"
        text = page.read_text()
        stripped = re.sub(r"(?<![-\w])" + re.escape(flag) + r"(?![-\w])", "--flag-taken-out", text)
        if stripped == text:
            sys.exit(f"check_flags self-test: {flag} is not in run.md to begin with")
        page.write_text(stripped)
        p = subprocess.run([sys.executable, __file__, build, copy], capture_output=True, text=True, timeout=TIMEOUT_S)
    want = f"ccbench run: {flag} is not in docs/run.md"
    if p.returncode != 1 or p.stdout.splitlines()[:-1] != [want]:
        sys.exit(f"check_flags self-test: want exit 1 and only '{want}', got exit {p.returncode}:\n{p.stdout}{p.stderr}")
    print(f"check_flags self-test: {flag} taken out of run.md is reported, alone")
    return 0


def main():
    build, docs = Path(sys.argv[1]), Path(sys.argv[2])
    if sys.argv[3:] == ["--self-test"]:
        return self_test(build, docs)
    ccbench, measure = build / "ccbench", build / "ccbench-measure"
    commands = listed(run_help([ccbench, "--help"]), "commands:")
    measuring = listed(run_help([measure, "--help"]), "commands:")
    if not commands or not measuring:
        sys.exit("check_flags: no command list in ccbench --help or ccbench-measure --help")
    missing_from_ccbench = sorted(set(measuring) - set(commands))
    if missing_from_ccbench:
        sys.exit(f"check_flags: ccbench --help does not list {', '.join(missing_from_ccbench)}")
    helps = []  # (what, help text, page)
    for command in commands:
        page = docs / f"{command}.md"
        binary = measure if command in measuring else ccbench
        text = run_help([binary, command, "--help"])
        if command in measuring:
            helps.append((f"ccbench {command}", row_flags(run_help([ccbench, "help", "--markdown", command])), page))
        else:
            helps.append((f"ccbench {command}", flags(text), page))
        for sub in listed(text, "subcommands:"):
            helps.append((f"ccbench {command} {sub}", flags(run_help([binary, command, sub, "--help"])), page))
    problems, checked = [], 0
    for what, command_flags, page in helps:
        if not page.is_file():
            problems.append(f"{what}: no doc page {page.name}")
            continue
        doc = page.read_text()
        for flag in command_flags:
            checked += 1
            if not documented(flag, doc):
                problems.append(f"{what}: {flag} is not in docs/{page.name}")
    if checked == 0:
        sys.exit("check_flags: no flag found in any --help (has the help format changed?)")
    for p in problems:
        print(p)
    print(f"check_flags: {checked} flags of {len(helps)} commands, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
