#!/usr/bin/python3
"""Generates ccbench result files with known ratios, for the compare tests and the README session.

A run's time at a size is  latency + bytes / bandwidth, times a per-trial factor (launch-to-launch
variation, log-normal with sigma `trial_sigma`) and per-sample log-normal noise (`sigma`). The
candidate is the same model with every time divided by `ratio(op, bytes)`, so the true
speedup ratio time_base / time_cand is known exactly. Deterministic for a given seed.
"""
import argparse
import json
import math
import random
from pathlib import Path

FACTOR = {"allreduce": lambda n: 2 * (n - 1) / n, "allgather": lambda n: (n - 1) / n,
          "alltoall": lambda n: (n - 1) / n, "reduce_scatter": lambda n: (n - 1) / n,
          "broadcast": lambda n: 1.0, "fabric_pingpong": lambda n: 1.0}
MIB = 1 << 20


def median(values):
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def make_file(*, ops=("allreduce", "allgather", "alltoall"), sizes=None, trials=5, samples=50, ranks=16,
              ranks_per_node=8, ratio=lambda op, b: 1.0, sigma=0.02, trial_sigma=0.005, seed=1,
              instance_type="p5en.48xlarge", generation="v3", link_gbps=3200, busbw_gbps=300.0,
              latency_us=20.0, label="", status="complete", timing="ccbench", iters="auto", trial_offset=0,
              extra_fabric=None):
    rng = random.Random(seed)
    sizes = sizes or [1 << k for k in range(10, 31, 2)]
    results = []
    for t in range(trials):
        trial_factor = math.exp(rng.gauss(0, trial_sigma))
        for op in ops:
            for b in sizes:
                factor = FACTOR[op](ranks)
                base_time = latency_us + b * factor / (busbw_gbps * 1e3)  # us
                t_med = base_time * trial_factor / ratio(op, b)
                s = [t_med * math.exp(rng.gauss(0, sigma)) for _ in range(samples)]
                med = median(s)
                ss = sorted(s)
                algbw = b / (med * 1e-6) / 1e9
                results.append({
                    "op": op, "backend": "nccl", "dtype": "float", "redop": "sum" if op == "allreduce" else "none",
                    "in_place": False, "root": -1, "bytes": b, "count": b // 4, "ranks": ranks,
                    "trial": t + trial_offset, "samples_us": [round(v, 6) for v in s], "batch": 1,
                    "samples_kind": "raw",
                    "time_us": {"min": ss[0], "median": med, "mean": sum(s) / len(s), "p99": ss[-1], "max": ss[-1],
                                "ci95": [ss[max(0, len(s) // 2 - 3)], ss[min(len(s) - 1, len(s) // 2 + 3)]]},
                    "algbw_gbps": algbw, "busbw_gbps": algbw * FACTOR[op](ranks), "wrong": 0,
                    "ci_target_met": True})
    fabric = {"path": "efa", "provider": "efa", "generation": generation}
    if link_gbps is not None:
        fabric["link_gbps"] = link_gbps
    fabric.update(extra_fabric or {})
    return {
        "schema_version": 1,
        "tool": {"name": "ccbench", "version": "0.1.0", "git": "test"},
        "run": {"status": status, "started_at": "2026-11-30T10:00:00.000Z", "finished_at": "2026-11-30T10:10:00.000Z",
                "command": ["ccbench", "run"], "label": label, "exit_code": 0, "error": None},
        "system": {"instance_type": instance_type, "nodes": ranks // ranks_per_node, "ranks": ranks,
                   "ranks_per_node": ranks_per_node, "hosts": []},
        "fabric": fabric,
        "software": {"nccl": "2.26.2", "ofi_nccl": "1.14.2", "libfabric": "2.1.0amzn3.0", "cuda": "12.8"},
        "environment": {},
        "config": {"backend": "nccl", "ops": list(ops), "dtype": "float", "redop": "sum",
                   "timing": {"method": timing}, "iters": iters, "warmup": 5, "trials": trials},
        "results": results,
    }


def write(path, doc):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out")
    p.add_argument("--ratio", type=float, default=1.0)
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--samples", type=int, default=50)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--instance-type", default="p5en.48xlarge")
    p.add_argument("--generation", default="v3")
    p.add_argument("--link-gbps", type=float, default=3200)
    p.add_argument("--label", default="")
    a = p.parse_args()
    write(a.out, make_file(ratio=lambda op, b: a.ratio, trials=a.trials, samples=a.samples, seed=a.seed,
                           instance_type=a.instance_type, generation=a.generation, link_gbps=a.link_gbps,
                           label=a.label))


if __name__ == "__main__":
    main()
