#!/usr/bin/python3
"""ccbench model on published p5.48xlarge nccl-tests data (results/published/, source [2] of its
README): fit on the smaller node counts, predict the larger ones, and compare the error with naive
carry-forward (the largest fitted node count's busbw reused at the new node count; also its time
reused). The model must beat busbw carry-forward overall. Prints the table docs/model.md quotes.
Usage: test_published.py CCBENCH REPO_ROOT"""
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

CCBENCH, ROOT = sys.argv[1], sys.argv[2]
PUB = os.path.join(ROOT, "results", "published")


def bus_factor(op, p):
    return 2 * (p - 1) / p if op == "allreduce" else (p - 1) / p


def medians(op, nodes):
    rows = json.load(open(os.path.join(PUB, f"p5-hyperpod-{nodes}n-{op}.json")))["results"]
    by = {}
    for r in rows:
        by.setdefault(r["bytes"], []).append(r["time_us"]["median"])
    return {b: statistics.median(v) for b, v in by.items()}


fails = []
total = {"model": [], "busbw_cf": [], "time_cf": []}
inside = 0
count = 0
print(f"{'op':<10} {'fit on':<10} {'predict':>7} {'sizes':>5} {'model':>8} {'busbw carry-fwd':>16} {'time carry-fwd':>15} {'in band':>8}")
with tempfile.TemporaryDirectory() as tmp:
    for op in ("allreduce", "alltoall"):
        for fit_nodes, targets in (((2, 4, 8), (16, 32)), ((2, 4, 8, 16), (32,))):
            model = os.path.join(tmp, f"{op}-{len(fit_nodes)}.json")
            files = [os.path.join(PUB, f"p5-hyperpod-{n}n-{op}.json") for n in fit_nodes]
            subprocess.run([CCBENCH, "model", "fit", *files, "-o", model], check=True, capture_output=True)
            last = fit_nodes[-1]
            carried = medians(op, last)
            for n in targets:
                err = {"model": [], "busbw_cf": [], "time_cf": []}
                band = 0
                measured = medians(op, n)
                for size, t in sorted(measured.items()):
                    p = json.loads(subprocess.run(
                        [CCBENCH, "model", "predict", model, "--op", op, "--bytes", str(size), "--nodes", str(n),
                         "--format", "json"], check=True, capture_output=True, text=True).stdout)
                    err["model"].append(abs(math.log(p["time_us"] / t)))
                    busbw_old = size * bus_factor(op, last * 8) / carried[size]
                    err["busbw_cf"].append(abs(math.log(size * bus_factor(op, n * 8) / busbw_old / t)))
                    err["time_cf"].append(abs(math.log(carried[size] / t)))
                    band += p["time_lo_us"] <= t <= p["time_hi_us"]
                    if not p["extrapolated"]:
                        fails.append(f"{op} {size} on {n} nodes is not marked extrapolated")
                mean = {k: math.exp(statistics.mean(v)) - 1 for k, v in err.items()}
                for k in total:
                    total[k] += err[k]
                inside += band
                count += len(measured)
                print(f"{op:<10} {','.join(map(str, fit_nodes)):<10} {n:>7} {len(measured):>5} {100 * mean['model']:>7.1f}% "
                      f"{100 * mean['busbw_cf']:>15.1f}% {100 * mean['time_cf']:>14.1f}% {band:>4}/{len(measured)}")
overall = {k: math.exp(statistics.mean(v)) - 1 for k, v in total.items()}
print(f"overall mean absolute error: model {100 * overall['model']:.1f}%, busbw carry-forward "
      f"{100 * overall['busbw_cf']:.1f}%, time carry-forward {100 * overall['time_cf']:.1f}%; "
      f"measured inside the 90% band: {inside}/{count}")
if not overall["model"] < overall["busbw_cf"]:
    fails.append("the model does not beat busbw carry-forward")
if not overall["model"] < overall["time_cf"]:
    fails.append("the model does not beat time carry-forward")
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
