#!/usr/bin/python3
"""The CSV parses back (Python's csv module) to exactly the numbers of the JSON result files."""
import csv
import io
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import args, run, sample_files  # noqa: E402

ccbench, data = args()
files = sample_files(data)
r = run([ccbench, "report", *files, "--format", "csv"])
if r.returncode != 0:
    sys.exit(f"report failed: {r.stderr}")
rows = list(csv.DictReader(io.StringIO(r.stdout, newline="")))
expected = []
for path in files:
    doc = json.load(open(path))
    for res in doc["results"]:
        expected.append((path, doc["run"]["label"], res))
if len(rows) != len(expected):
    sys.exit(f"{len(rows)} CSV rows for {len(expected)} results")

bad = 0
for row, (path, label, res) in zip(rows, expected):
    t = res["time_us"]
    want = {
        "file": path, "label": label, "op": res["op"], "backend": res["backend"], "dtype": res["dtype"],
        "redop": res["redop"], "in_place": "true" if res["in_place"] else "false",
        "bytes": res["bytes"], "count": res["count"], "ranks": res["ranks"], "trial": res["trial"],
        "batch": res["batch"], "n_samples": len(res["samples_us"]),
        "time_us_min": t["min"], "time_us_median": t["median"], "time_us_mean": t["mean"], "time_us_p99": t["p99"],
        "time_us_max": t["max"], "time_us_ci95_lo": t["ci95"][0], "time_us_ci95_hi": t["ci95"][1],
        "algbw_gbps": res["algbw_gbps"], "busbw_gbps": res["busbw_gbps"], "wrong": res["wrong"],
        "ci_target_met": "true" if res["ci_target_met"] else "false",
    }
    for key, value in want.items():
        got = row[key]
        same = (float(got) == float(value)) if isinstance(value, (int, float)) else got == value
        if not same:
            bad += 1
            if bad < 10:
                print(f"mismatch {key}: csv {got!r} json {value!r} ({path} {res['op']} {res['bytes']})")
# A label with a quote (local-mpi.json: laptop "shm" run) must have come back intact through RFC 4180 quoting.
if not any(row["label"] == 'laptop "shm" run' for row in rows):
    bad += 1
    print("the quoted label did not survive")
if bad:
    sys.exit(f"FAILED: {bad} mismatches")
print(f"PASS: {len(rows)} rows, {len(rows) * 24} values identical")
