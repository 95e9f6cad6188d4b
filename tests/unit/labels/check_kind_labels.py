#!/usr/bin/python3
"""Every registered test has exactly one kind label (unit, integration, e2e), and it is the kind of
the folder that registers it: tests/unit|fuzz|gpu/<area>/ unit, tests/integration/<area>/
integration, tests/e2e/<area>/ e2e. A unit test is never started by a launcher itself.

Usage: check_kind_labels.py CTEST BUILD_DIR   (reads `ctest --show-only=json-v1` in BUILD_DIR)
"""
import json
import os
import subprocess
import sys

KINDS = {"unit", "integration", "e2e"}
FOLDER_KIND = {"unit": "unit", "fuzz": "unit", "gpu": "unit", "integration": "integration", "e2e": "e2e"}
LAUNCHERS = {"mpirun", "mpiexec", "srun", "sbatch"}


def folder_kind(test, graph):
    """The kind of the tests/<kind>/<area>/CMakeLists.txt that called add_test, or None when ctest
    has no backtrace (GoogleTest's tests, found when built)."""
    node = test.get("backtrace")
    while node is not None:
        path = graph["files"][graph["nodes"][node]["file"]]
        parts = path.split(os.sep)
        if len(parts) >= 4 and parts[-1] == "CMakeLists.txt" and parts[-4] == "tests":
            return FOLDER_KIND.get(parts[-3])
        node = graph["nodes"][node].get("parent")
    return None


def main():
    ctest, build = sys.argv[1], sys.argv[2]
    p = subprocess.run([ctest, "--show-only=json-v1"], cwd=build, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        print(f"FAILED: {ctest} --show-only=json-v1 in {build}: exit {p.returncode}\n{p.stderr}")
        return 1
    doc = json.loads(p.stdout)
    problems = []
    tests = doc["tests"]
    for t in tests:
        labels = set()
        for prop in t.get("properties", []):
            if prop["name"] == "LABELS":
                labels = set(prop["value"])
        kinds = sorted(labels & KINDS)
        if len(kinds) != 1:
            problems.append(f"{t['name']}: kind labels {kinds or 'none'} (labels {sorted(labels)}), want exactly one "
                            f"of {sorted(KINDS)}")
            continue
        want = folder_kind(t, doc["backtraceGraph"])
        if want and kinds[0] != want:
            problems.append(f"{t['name']}: labelled {kinds[0]} in a tests/ folder of kind {want}")
        command = t.get("command") or [""]
        if kinds[0] == "unit" and os.path.basename(command[0]) in LAUNCHERS:
            problems.append(f"{t['name']}: a unit test started by {os.path.basename(command[0])}")
    if not tests:
        problems.append(f"ctest in {build} lists no tests")
    if problems:
        print("FAILED:\n  " + "\n  ".join(problems))
        return 1
    counts = {k: sum(1 for t in tests if k in next((p["value"] for p in t.get("properties", [])
                                                     if p["name"] == "LABELS"), [])) for k in sorted(KINDS)}
    print(f"PASS: {len(tests)} tests, each with one kind label: " + ", ".join(f"{k} {n}" for k, n in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
