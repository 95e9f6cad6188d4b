#!/usr/bin/python3
"""Send/recv of a trace priced from a real fabric curve: `ccbench fabric` (pingpong over shm, 2 ranks
under a real mpirun, recorded as p5en.48xlarge) fitted into one model file, the published collectives
into another; a trace of 16 ranks (2 nodes x 8) whose ranks 0 and 8 exchange a message across nodes
priced on p5en.48xlarge with both files. The send and recv must be `ccbench model predict` of
fabric_pingpong at their size on 2 nodes (the fabric model file), the all-reduce the collectives
model's spec prior, and the slowest rank's step their sum. The check is of the pricing, not of the
measured times (whatever the machine measured, the two must agree).
Usage: test_trace_fabric.py CCBENCH REPO_ROOT"""
import json
import math
import os
import subprocess
import sys
import tempfile

CCBENCH, ROOT = sys.argv[1], sys.argv[2]
PROFILE = "p5en.48xlarge"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, launcher=()):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run([*launcher, CCBENCH, *args], capture_output=True, text=True, timeout=180, env=env)
    if r.returncode != 0:
        sys.exit(f"ccbench {' '.join(args)}: exit {r.returncode}: {r.stderr[-2000:]}")
    return r.stdout


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-9)


with tempfile.TemporaryDirectory() as tmp:
    fabric = os.path.join(tmp, "fabric.json")
    run("fabric", "-p", "shm", "--ops", "pingpong", "-b", "1K", "-e", "64K", "-n", "5", "--trials", "2", "-w", "2",
        "--instance-type", PROFILE, "-J", fabric,
        launcher=("mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none", "-np", "2"))
    fabric_model = os.path.join(tmp, "fabric-model.json")
    run("model", "fit", fabric, "-o", fabric_model, "--refits", "20", "--no-cross-validation")
    collectives = os.path.join(tmp, "p5.json")
    run("model", "fit", os.path.join(ROOT, "results", "published"), "-o", collectives, "--refits", "20",
        "--no-cross-validation")

    world = 16

    def calls(r):
        out = [{"op": "allreduce", "dtype": "float", "count": 1 << 20, "redop": "sum", "group": "world",
                "origin": "nccl_log"}]
        if r in (0, 8):
            out.append({"op": "send" if r == 0 else "recv", "dtype": "float", "count": 2048, "peer": 8 - r,
                        "group": "world", "origin": "nccl_log"})
        return out
    path = os.path.join(tmp, "job.trace.json")
    with open(path, "w") as f:
        json.dump({"trace_version": 1, "world_size": world,
                   "groups": [{"id": "world", "ranks": list(range(world)), "members_from_source": True}],
                   "ranks": [{"rank": r, "file": f"r{r}.log", "calls": calls(r)} for r in range(world)],
                   "provenance": {"format": "nccl-log", "source": "test", "source_version": "",
                                  "tool_version": "test", "not_in_source": []}}, f)
    doc = json.loads(run("model", "predict", collectives, fabric_model, "--trace", path, "--ranks-per-node", "8",
                         "--profiles", PROFILE, "--format", "json"))
    sites, p = doc["sites"], doc["profiles"][0]
    check([s["op"] for s in sites] == ["allreduce", "send", "recv"], f"sites {sites}")
    check(p["unpriced"] == 0, f"unpriced {p['unpriced']}: {[s['note'] for s in p['sites']]}")
    one_way = json.loads(run("model", "predict", fabric_model, "--op", "fabric_pingpong", "--bytes", "8192",
                             "--nodes", "2", "--profile", PROFILE, "--format", "json"))
    allreduce = json.loads(run("model", "predict", collectives, "--op", "allreduce", "--bytes", str(4 << 20),
                               "--nodes", "2", "--ranks-per-node", "8", "--profile", PROFILE, "--format", "json"))
    for s, r in zip(sites[1:], p["sites"][1:]):
        check(s["bytes"] == 8192 and s["nodes"] == 2, f"{s['op']}: {s['bytes']} bytes on {s['nodes']} nodes")
        check(r["priced"] and close(r["time_us"], one_way["time_us"]) and close(r["time_hi_us"], one_way["time_hi_us"])
              and "fabric_pingpong curve: one-way time" in r["note"], f"{s['op']}: {r}, predict says {one_way}")
    check(close(p["sites"][0]["time_us"], allreduce["time_us"]), f"allreduce {p['sites'][0]}, predict {allreduce}")
    # Ranks 0 and 8 each issue the all-reduce and one message: the step is that sum, rank 0 first.
    for key, k in (("step_us", "time_us"), ("step_lo_us", "time_lo_us"), ("step_hi_us", "time_hi_us")):
        check(close(p[key], allreduce[k] + one_way[k]), f"{key} {p[key]}, want {allreduce[k] + one_way[k]}")
    check(p["critical_rank"] == 0, f"critical rank {p['critical_rank']}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok")
