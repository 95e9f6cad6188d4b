"""Names the sanitizer job's tests whose program is not built (exit 3), before ctest runs them.

Reads `ctest --show-only=json-v1` on stdin; argv: the build folder and the exclusion regex the job
passes to ctest -E. A test's command names its program (or, for a Python check, the probe it runs)
by its path in the build folder; the job builds a list of targets, not all, so a new probe left
off that list is otherwise found only as "No such file" when the CI run ends. Only programs are
checked: the program itself, and a Python check's arguments (a probe); other arguments under the
build folder may be outputs the test creates (the fuzz run's findings folder).
"""
import json
import os
import re
import sys

build, exclude = sys.argv[1].rstrip("/"), re.compile(sys.argv[2])


def programs(command):
    if command and os.path.basename(command[0]).startswith("python"):
        return command[1:]
    return command[:1]


missing = [(test["name"], arg)
           for test in json.load(sys.stdin)["tests"] if not exclude.search(test["name"])
           for arg in programs(test.get("command", []))
           if arg.startswith(build + "/") and not os.path.exists(arg)]
for name, path in missing:
    print(f"sanitize.sh: test {name} runs {path}, which this job does not build: add its target to "
          "the job's --target list, or the test to its exclusions", file=sys.stderr)
sys.exit(3 if missing else 0)
