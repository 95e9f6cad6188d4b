#!/usr/bin/python3
"""`ccbench model predict --trace` and `model plan --against` on the command line: exit codes and the
one line each bad input gets (a bad trace names its file and field, a collective the profile lacks
names the call and op, a bad --migrate names the flag), send/recv without a fabric curve listed as
not priced with the reason, and the flags that do not mix. Every case bounded by a timeout.
Usage: test_trace_price_cli.py CCBENCH REPO_ROOT"""
import json
import os
import sys
import tempfile

from cli_checks import check, failures, run_ccbench

CCBENCH, ROOT = sys.argv[1], sys.argv[2]
PUB = os.path.join(ROOT, "results", "published")
WORKLOAD = os.path.join(ROOT, "configs", "workloads", "dense-70b-fsdp.yaml")


def run(*args):
    return run_ccbench(CCBENCH, args, 60)


def expect(args, rc, err, what):
    got_rc, out, got_err = run(*args)
    check(got_rc == rc and got_err == err and (rc == 0 or out == ""),
          f"{what}: exit {got_rc}, {got_err!r}, stdout {out[:80]!r}; want {rc}, {err!r}")


def trace(path, calls_of_rank, world=16):
    """A trace of `world` ranks on the world group; calls_of_rank(r) lists rank r's calls."""
    doc = {"trace_version": 1, "world_size": world,
           "groups": [{"id": "world", "ranks": list(range(world)), "members_from_source": True}],
           "ranks": [{"rank": r, "file": f"r{r}.log", "calls": calls_of_rank(r)} for r in range(world)],
           "provenance": {"format": "nccl-log", "source": "test", "source_version": "", "tool_version": "test",
                          "not_in_source": []}}
    with open(path, "w") as f:
        json.dump(doc, f)


def allreduce(count, step=0):
    return {"op": "allreduce", "dtype": "float", "count": count, "redop": "sum", "group": "world", "step": step,
            "origin": "nccl_log"}


with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "p5.json")
    files = [os.path.join(PUB, f) for f in ("p5-awsome-2n-allreduce.json", "p5-hyperpod-32n-allreduce.json",
                                             "p5-hyperpod-4n-allreduce.json")]
    rc, _, err = run("model", "fit", *files, "-o", model, "--refits", "20", "--no-cross-validation")
    check(rc == 0, f"fit: {rc} {err}")

    # An all-reduce of 64 MiB on 16 ranks (2 nodes of 8) and a send/recv between ranks 0 and 8.
    good = os.path.join(tmp, "good.json")

    def good_calls(r):
        calls = [allreduce(16 << 20)]
        if r in (0, 8):
            calls.append({"op": "send" if r == 0 else "recv", "dtype": "float", "count": 1024, "peer": 8 - r,
                          "group": "world", "step": 0, "origin": "nccl_log"})
        return calls
    trace(good, good_calls)
    rc, out, err = run("model", "predict", model, "--trace", good, "--format", "json")
    check(rc == 0 and err == "", f"good trace: exit {rc} {err}")
    if rc == 0:
        doc = json.loads(out)
        check(doc["ranks_per_node"] == 8, f"ranks per node {doc['ranks_per_node']}, want 8 (the fitted layout)")
        sites = doc["sites"]
        check([s["op"] for s in sites] == ["allreduce", "send", "recv"], f"sites {sites}")
        check(sites[0]["bytes"] == 64 << 20 and sites[0]["nodes"] == 2 and sites[0]["ranks_per_node"] == 8,
              f"allreduce site {sites[0]}")
        check(sites[1]["nodes"] == 2 and sites[1]["bytes"] == 4096, f"send site {sites[1]}")
        p = doc["profiles"][0]
        check(p["profile"] == "p5.48xlarge" and p["unpriced"] == 2, f"profile {p['profile']} unpriced {p['unpriced']}")
        for s in p["sites"][1:]:
            check(not s["priced"] and s["note"].startswith("not priced: no point-to-point curve for this profile")
                  and "the model has no fit for fabric_pingpong (fitted: allreduce)" in s["note"],
                  f"send/recv note {s['note']!r}")
        # The step is the all-reduce alone: one call a step.
        check(p["step_us"] == p["sites"][0]["time_us"] and p["step_hi_us"] == p["sites"][0]["time_hi_us"],
              f"step {p['step_us']} vs the all-reduce {p['sites'][0]['time_us']}")

    # A bad trace: named by file, record and field; a missing one by file.
    bad = os.path.join(tmp, "bad.json")
    trace(bad, lambda r: [dict(allreduce(8), op="allreducex")])
    expect(["model", "predict", model, "--trace", bad], 2,
           f"ccbench model predict: {bad}: ranks[0].calls[0]: field 'op' must be one of allreduce, allgather, "
           "reduce_scatter, alltoall, alltoallv, broadcast, reduce, send, recv, barrier\n", "bad op")
    no_group = os.path.join(tmp, "nogroup.json")
    trace(no_group, lambda r: [dict(allreduce(8), group="tp")])
    expect(["model", "predict", model, "--trace", no_group], 2,
           f"ccbench model predict: {no_group}: ranks[0].calls[0]: field 'group': 'tp' is not in groups\n",
           "unknown group")
    missing = os.path.join(tmp, "missing.json")
    rc, out, err = run("model", "predict", model, "--trace", missing)
    check(rc == 2 and out == "" and err.count("\n") == 1 and err.startswith(f"ccbench model predict: {missing}"),
          f"missing trace: {rc} {err!r}")

    # A collective the profile lacks: the model has no alltoall (and so none from spec either).
    a2a = os.path.join(tmp, "a2a.json")
    trace(a2a, lambda r: [allreduce(1 << 20), {"op": "alltoall", "dtype": "bfloat16", "count": 1 << 20,
                                               "group": "world", "step": 0, "origin": "nccl_log"}])
    expect(["model", "predict", model, "--trace", a2a], 2,
           f"ccbench model predict: {a2a}: ranks[0].calls[1]: op 'alltoall' (2M per call, group of 16 on 2 nodes): "
           "not priced: --op: the model has no fit for alltoall (fitted: allreduce) on p5.48xlarge\n", "no alltoall")
    # A layout the model never fitted: 16 ranks at 4 per node.
    expect(["model", "predict", model, "--trace", good, "--ranks-per-node", "4"], 2,
           f"ccbench model predict: {good}: ranks[0].calls[0]: op 'allreduce' (64M per call, group of 16 on 4 nodes): "
           "not priced: --ranks-per-node: allreduce on p5.48xlarge was fitted with 8 ranks per node only on "
           "p5.48xlarge\n", "layout never fitted")

    # --migrate: the form, and profiles that must be priced.
    expect(["model", "predict", model, "--trace", good, "--migrate", "p5en.48xlarge"], 2,
           "ccbench model predict: --migrate p5en.48xlarge: expected FROM:TO (two profiles)\n", "migrate form")
    expect(["model", "predict", model, "--trace", good, "--profiles", "p5.48xlarge", "--migrate",
            "p5.48xlarge:nosuch"], 2,
           f"ccbench model predict: {good}: ranks[0].calls[0]: op 'allreduce' (64M per call, group of 16 on 2 nodes): "
           "not priced: --profile: 'nosuch' was not measured and has no spec in configs/instances/aws.yaml "
           "(measured: p5.48xlarge) on nosuch\n", "migrate to an unknown profile")

    # Flags that do not mix.
    expect(["model", "predict", model, "--trace", good, "--op", "allreduce"], 2,
           "ccbench model predict: --trace: prices the trace's own calls; --op, --bytes, --nodes and --profile are "
           "for one call (profiles: --profiles)\n", "--trace with --op")
    expect(["model", "predict", model, "--trace", ""], 2,
           "ccbench model predict: --trace: give a trace file (ccbench trace import)\n", "--trace empty")
    expect(["model", "predict", model, "--op", "allreduce", "--bytes", "1M", "--nodes", "2", "--migrate", "a:b"], 2,
           "ccbench model predict: --profiles and --migrate are for --trace (one call: --profile)\n",
           "--migrate without --trace")
    expect(["model", "predict", model, "--bytes", "1M", "--nodes", "2"], 2,
           "ccbench model predict: --op is required (or price a trace with --trace)\n", "no --op")
    expect(["model", "predict", model, model, "--op", "allreduce", "--bytes", "1M", "--nodes", "2"], 2,
           f"ccbench model predict: The following argument was not expected: {model}\n", "two models for one call")

    # plan --against: a bad trace, and the formats that cannot show it.
    expect(["model", "plan", model, "--workload", WORKLOAD, "--against", bad], 2,
           f"ccbench model plan: {bad}: ranks[0].calls[0]: field 'op' must be one of allreduce, allgather, "
           "reduce_scatter, alltoall, alltoallv, broadcast, reduce, send, recv, barrier\n", "plan --against bad")
    expect(["model", "plan", model, "--workload", WORKLOAD, "--against", good, "--format", "markdown"], 2,
           "ccbench model plan: --against: shown in the text and json formats only, not markdown\n",
           "plan --against markdown")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok")
