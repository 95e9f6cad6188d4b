#!/usr/bin/python3
"""The gbench output has what Google Benchmark's tools/compare.py reads.

compare.py (tools/gbench/report.py, util.py) loads {"context", "benchmarks"}; partitions benchmarks by
"name" (filtering on "run_name"), keeps those with "time_unit", "real_time" and "cpu_time", sorts by
"family_index", "per_family_instance_index", "repetition_index" and "run_type", and pairs repetitions
of the same name for its U test. This test re-does that pairing on two of our files.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import args, run, sample_files  # noqa: E402

ccbench, data = args()
base_path, cand_path, _ = sample_files(data)


def gbench(path):
    r = run([ccbench, "report", path, "--format", "gbench"])
    if r.returncode != 0:
        sys.exit(f"report failed: {r.stderr}")
    return json.loads(r.stdout)


base, cand = gbench(base_path), gbench(cand_path)
problems = []
for doc in (base, cand):
    if set(doc) != {"context", "benchmarks"}:
        problems.append(f"top-level keys {sorted(doc)}")
    for key in ("date", "host_name", "executable", "num_cpus", "library_build_type"):
        if key not in doc["context"]:
            problems.append(f"context lacks {key}")
    for b in doc["benchmarks"]:
        for key, kind in (("name", str), ("run_name", str), ("run_type", str), ("iterations", int),
                          ("real_time", (int, float)), ("cpu_time", (int, float)), ("time_unit", str),
                          ("repetitions", int), ("repetition_index", int), ("family_index", int),
                          ("per_family_instance_index", int), ("threads", int), ("bytes_per_second", (int, float))):
            if not isinstance(b.get(key), kind):
                problems.append(f"{b.get('name')}: {key} = {b.get(key)!r}")
        if b["run_type"] != "iteration" or b["time_unit"] not in ("ns", "us", "ms", "s"):
            problems.append(f"{b['name']}: run_type/time_unit")

# compare.py's partition: names in both files, repetitions paired in order.
names = [b["name"] for b in base["benchmarks"]]
common = [n for n in dict.fromkeys(names) if n in {b["name"] for b in cand["benchmarks"]}]
if len(common) != len(set(names)):
    problems.append(f"{len(common)} common names of {len(set(names))}")
reps = {}
for b in base["benchmarks"]:
    reps.setdefault(b["name"], []).append(b)
for name, runs in reps.items():
    if [r["repetition_index"] for r in runs] != list(range(runs[0]["repetitions"])):
        problems.append(f"{name}: repetitions {[r['repetition_index'] for r in runs]}")
# The numbers are the JSON's: real_time = median time (us), bytes_per_second = algbw.
src = json.load(open(base_path))["results"]
for b, res in zip(base["benchmarks"], src):
    if b["real_time"] != res["time_us"]["median"] or abs(b["bytes_per_second"] - res["algbw_gbps"] * 1e9) > 1e-3:
        problems.append(f"{b['name']}: numbers differ from the JSON")
        break
example = base["benchmarks"][0]
print(json.dumps(example, indent=1)[:600])
if problems:
    print("FAILED:\n  " + "\n  ".join(problems[:20]))
    sys.exit(1)
print(f"PASS: {len(base['benchmarks'])} benchmarks, {len(common)} names pair across the two files")
