#!/usr/bin/python3
"""No shell between ccbench and the programs it runs (issue 27 item 6): a path the user chose, such
as a target named q'$(touch PWNED)'x, must reach a program as one literal argument. So nothing under
src/ calls popen, system or a shell's -c; programs are run by argv (core/run_program.hpp:
posix_spawnp, or launch/process.cpp's fork + execvp).

Usage: check_no_shell.py SRC_DIR   (exit 0 when clean, 1 with one line per use)
       check_no_shell.py --self-test (the patterns catch what they should, and only that)"""
import os
import re
import sys
import tempfile

# Comments and string contents are not calls; strip comments first (a comment may say "no popen").
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
PATTERNS = [
    ("popen", re.compile(r"\bpopen\s*\(")),
    # std::system("..."), ::system(x), system(cmd): a call with an argument; not obj.system(),
    # Writer::system() or a declaration `json system();`
    ("system", re.compile(r"(?:\bstd::|(?<![\w:.>])::|(?<![\w:.>]))system\s*\(\s*[^)\s]")),
    ("a shell's -c", re.compile(r'"(?:/bin/|/usr/bin/)?(?:ba|da|z|k)?sh"\s*,\s*"-c"')),
    ("/bin/sh", re.compile(r'"/bin/sh\b')),
    ("wordexp", re.compile(r"\bwordexp\s*\(")),
]
SUFFIXES = (".cpp", ".hpp", ".h", ".cc", ".c", ".in")


def uses(text):
    code = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for name, pattern in PATTERNS:
        for m in pattern.finditer(code):
            yield code.count("\n", 0, m.start()) + 1, name


def check(src):
    found = []
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(SUFFIXES):
                continue
            path = os.path.join(root, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            for line, name in uses(text):
                found.append(f"{os.path.relpath(path, src)}:{line}: {name}: run the program by argv "
                             "(core/run_program.hpp), never through a shell")
    return found


def self_test():
    bad = {
        "a.cpp": 'FILE* p = ::popen(cmd.c_str(), "r");\n',
        "b.cpp": 'if (std::system("command -v lfs") != 0) {}\n',
        "c.cpp": 'int rc = system(cmd.c_str());\n',
        "d.cpp": 'execl("/bin/sh", "sh", "-c", cmd, nullptr);\n',
        "e.cpp": 'const char* argv[] = {"bash", "-c", text};\n',
    }
    good = {
        "f.cpp": '// popen( would be wrong here; so is std::system("x")\nwriter->merge_system(x);\n'
                 'json ResultWriter::system() { return s; }\nnlohmann::json system();\nw.system()["a"];\n',
    }
    with tempfile.TemporaryDirectory() as d:
        for name, text in {**bad, **good}.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        found = check(d)
    flagged = {line.split(":")[0] for line in found}
    ok = flagged == set(bad)
    print("self-test", "passed" if ok else f"FAILED: flagged {sorted(flagged)}, expected {sorted(bad)}")
    return 0 if ok else 1


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = check(sys.argv[1])
    for line in found:
        print(line)
    if not found:
        print("no popen, system or shell -c under", sys.argv[1])
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
