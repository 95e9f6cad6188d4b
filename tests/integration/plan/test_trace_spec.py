#!/usr/bin/python3
"""A trace priced on the shipped spec profiles: results/published fitted (p5.48xlarge, allreduce and
alltoall), a trace written here (32 ranks = 4 nodes x 8, 2 steps) priced on p5en.48xlarge and
p6-b200.48xlarge (neither measured: from their spec in configs/instances/aws.yaml) with --migrate.
Each site's per-call time must be `ccbench model predict` of the same call (half an all-reduce for
the all-gather, which the data lacks; an alltoall of the group x the largest chunk for the
alltoallv), and the step, its band and the migration's intervals are recomputed from them by the
rules of docs/model.md. Then `model plan --against` with a DDP workload of the same job.
Usage: test_trace_spec.py CCBENCH REPO_ROOT"""
import json
import math
import os
import subprocess
import sys
import tempfile

CCBENCH, ROOT = sys.argv[1], sys.argv[2]
FROM, TO = "p5en.48xlarge", "p6-b200.48xlarge"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    r = subprocess.run([CCBENCH, *args], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit(f"ccbench {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r.stdout


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-9)


W = 32


def rank_calls(r):
    out = [{"op": "allreduce", "dtype": "float", "count": 1, "redop": "sum", "group": "world", "origin": "nccl_log"}]
    for step in (0, 1):
        def c(**kw):
            return dict({"group": "world", "step": step, "origin": "nccl_log"}, **kw)
        out += [c(op="allreduce", dtype="float", count=250_000_000, redop="sum") for _ in range(4)]
        out.append(c(op="allgather", dtype="bfloat16", count=1 << 20))
        out.append(c(op="alltoall", dtype="bfloat16", count=1 << 22))
        counts = [1024 * (1 + j % 4) for j in range(W)]
        out.append(c(op="alltoallv", dtype="bfloat16", count=sum(counts), counts=counts))
        out.append(c(op="send" if r % 16 < 8 else "recv", dtype="float", count=1024, peer=r ^ 8))
    return out


with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "p5.json")
    run("model", "fit", os.path.join(ROOT, "results", "published"), "-o", model, "--refits", "20",
        "--no-cross-validation")
    path = os.path.join(tmp, "job.trace.json")
    with open(path, "w") as f:
        json.dump({"trace_version": 1, "world_size": W,
                   "groups": [{"id": "world", "ranks": list(range(W)), "members_from_source": True}],
                   "ranks": [{"rank": r, "file": f"r{r}.log", "calls": rank_calls(r)} for r in range(W)],
                   "provenance": {"format": "nccl-log", "source": "test", "source_version": "",
                                  "tool_version": "test", "not_in_source": []}}, f)
    doc = json.loads(run("model", "predict", model, "--trace", path, "--profiles", f"{FROM},{TO}", "--migrate",
                         f"{FROM}:{TO}", "--format", "json"))
    check(doc["steps"] == 2 and doc["calls_outside_steps"] == W and doc["ranks_per_node"] == 8,
          f"steps {doc['steps']}, outside {doc['calls_outside_steps']}, ranks per node {doc['ranks_per_node']}")
    sites = doc["sites"]
    ops = [s["op"] for s in sites]
    check(ops == ["allreduce", "allgather", "alltoall", "alltoallv", "send", "recv"], f"sites {ops}")
    want_bytes = {"allreduce": 1_000_000_000, "allgather": (1 << 20) * 2 * W, "alltoall": (1 << 22) * 2,
                  "alltoallv": W * 4096 * 2, "send": 4096, "recv": 4096}
    for s in sites:
        check(s["bytes"] == want_bytes[s["op"]], f"{s['op']}: bytes {s['bytes']}, want {want_bytes[s['op']]}")
        check(s["nodes"] == (4 if s["op"] not in ("send", "recv") else 2), f"{s['op']}: nodes {s['nodes']}")
        want_calls = 4 if s["op"] == "allreduce" else 1
        check(s["calls_per_step"] == want_calls, f"{s['op']}: calls per step {s['calls_per_step']}")

    steps = {}
    for p in doc["profiles"]:
        prof = p["profile"]
        check(p["from_spec"] and p["unpriced"] == 2, f"{prof}: from_spec {p['from_spec']}, unpriced {p['unpriced']}")
        total = [0.0, 0.0, 0.0]
        for s, r in zip(sites, p["sites"]):
            if s["op"] in ("send", "recv"):
                check(not r["priced"] and "no point-to-point curve" in r["note"], f"{prof} {s['op']}: {r}")
                continue
            op, factor = {"allreduce": ("allreduce", 1), "allgather": ("allreduce", 0.5), "alltoall": ("alltoall", 1),
                          "alltoallv": ("alltoall", 1)}[s["op"]]
            one = json.loads(run("model", "predict", model, "--op", op, "--bytes", str(s["bytes"]), "--nodes",
                                 str(s["nodes"]), "--ranks-per-node", "8", "--profile", prof, "--format", "json"))
            want = [factor * one["time_us"], factor * one["time_lo_us"], factor * one["time_hi_us"]]
            got = [r["time_us"], r["time_lo_us"], r["time_hi_us"]]
            check(all(close(a, b) for a, b in zip(got, want)), f"{prof} {s['op']}: {got}, predict says {want}")
            for i in range(3):
                total[i] += s["calls_per_step"] * want[i]
        got = [p["step_us"], p["step_lo_us"], p["step_hi_us"]]
        check(all(close(a, b) for a, b in zip(got, total)), f"{prof}: step {got}, want {total}")
        steps[prof] = total
    # p5en and p6-b200 have the same EFA bandwidth (3200 Gbps): from spec they price alike.
    check(steps[FROM] == steps[TO], f"{FROM} {steps[FROM]} vs {TO} {steps[TO]}")
    m = doc["migration"]
    a, b = steps[FROM], steps[TO]
    check(m["sites_compared"] == 4, f"sites compared {m['sites_compared']}")
    want = {"delta_us": b[0] - a[0], "delta_lo_us": b[1] - a[2], "delta_hi_us": b[2] - a[1],
            "ratio": b[0] / a[0], "ratio_lo": b[1] / a[2], "ratio_hi": b[2] / a[1]}
    for k, v in want.items():
        check(close(m[k], v), f"migration {k}: {m[k]}, want {v}")

    # The same job's plan: DDP, 1B fp32 parameters in 1 GiB buckets = 4 all-reduces of 1e9 bytes.
    workload = os.path.join(tmp, "ddp.yaml")
    with open(workload, "w") as f:
        f.write("model: {parameters: 1B, layers: 24, hidden: 2048}\ndtype: fp32\nsequence_length: 2048\n"
                "micro_batch: 4\nparallel: {ranks: 32, ranks_per_node: 8, dp: 32}\nsharding: none\nbucket: 1G\n")
    plan = json.loads(run("model", "plan", model, "--workload", workload, "--profiles", FROM, "--against", path,
                          "--format", "json"))
    rows = plan["against"]["rows"]
    got = [(r["agreement"], r["plan_row"], r["trace"]["op"] if r["trace"] else None) for r in rows]
    check(got == [("same", 0, "allreduce"), ("trace only", None, "allgather"), ("trace only", None, "alltoall"),
                  ("trace only", None, "alltoallv"), ("trace only", None, "send/recv")], f"against {got}")
    # The plan document with `against` is still one `ccbench report --plan` reads.
    plan_file = os.path.join(tmp, "plan.json")
    with open(plan_file, "w") as f:
        json.dump(plan, f)
    report = run("report", "--plan", plan_file, "--format", "markdown")
    check("allreduce" in report, f"report --plan: {report[:200]}")
    text = run("model", "plan", model, "--workload", workload, "--profiles", FROM, "--against", path)
    check("Against the trace" in text and text.rstrip().endswith("trace only"), f"plan text: {text[-300:]}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok")
