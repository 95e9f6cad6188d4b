#!/usr/bin/python3
"""Writes the nccl-tests and OSU logs the import tests read: the tools' real output formats with our
own (made-up, self-consistent) numbers. Deterministic; rerun to regenerate.

nccl-tests columns: time (us), algbw = size / time, busbw = algbw * 2(n-1)/n for all_reduce_perf,
printed the way nccl-tests prints them (7 and 6 character fields, fewer decimals as values grow).
"""
import json
import math
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent


def float_field(value, width):
    # nccl-tests' width-bound formatting: 2 decimals while they fit, then 1, then 0.
    power = 0
    v = 1
    while value >= v:
        power += 1
        v *= 10
    if power < width - 2:
        return f"{value:{width}.2f}"
    if power < width - 1:
        return f"{value:{width}.1f}"
    if power < width + 1:
        return f"{value:{width}.0f}"
    return f"{value:{width}.1e}"


def nccl_rows(rng, ranks, sizes, latency, bw_gbps, factor):
    rows = []
    for size in sizes:
        count = size // 4
        out = []
        for _ in range(2):  # out-of-place, in-place
            t = (latency + size * factor / (bw_gbps * 1e3)) * math.exp(rng.gauss(0, 0.01))
            t = float(float_field(t, 7))  # what the log shows is what a reader gets
            alg = size / t / 1e3
            bus = alg * factor
            out.append(f"  {float_field(t, 7)}  {float_field(alg, 6)}  {float_field(bus, 6)}  {0:6g}")
        rows.append(f"{size:12d}  {count:12d}  {'float':>8s}  {'sum':>6s}  {-1:6d}" + "".join(out))
    return rows


def nccl_text(prefix="", seed=3, ranks=16):
    rng = random.Random(seed)
    factor = 2 * (ranks - 1) / ranks
    sizes = [8 << k for k in range(0, 28, 3)]
    hosts = ["ip-10-1-0-11", "ip-10-1-0-12"]
    lines = [
        "# nccl-tests version 2.14.1 nccl-headers=22602 nccl-library=22602",
        "# Collective test starting: all_reduce_perf",
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 8(factor) warmup iters: 5 iters: 20 agg iters: 1 "
        "validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    for r in range(ranks):
        host = hosts[r // 8]
        bus = [0x53, 0x64, 0x75, 0x86, 0x97, 0xA8, 0xB9, 0xCA][r % 8]
        lines.append(f"#  Rank {r:2d} Group  0 Pid {4100 + r:6d} on {host:>10s} device {r % 8:2d} [{0:04x}:{bus:02x}:00] "
                     "NVIDIA H200")
    lines += [
        "#",
        "#                                                              out-of-place                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
    ]
    body = nccl_rows(rng, ranks, sizes, 38.0, 360.0, factor)
    lines += body
    lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 101.234 ", "#",
              "# Collective test concluded: all_reduce_perf", "#", ""]
    noise = [f"{hosts[0]}:4100:4100 [0] NCCL INFO NCCL version 2.26.2+cuda12.8",
             f"{hosts[0]}:4100:4180 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa-direct (found 16 nics)"]
    lines = lines[:5] + noise + lines[5:]
    return "\n".join(prefix.format(rank=0) + l if l else l for l in lines)


def nccl_json(seed=5, ranks=8):
    rng = random.Random(seed)
    factor = 2 * (ranks - 1) / ranks
    results = []
    for size in [1 << k for k in range(10, 31, 4)]:
        rec = {"size": size, "count": size // 4, "type": "float", "redop": "sum", "root": "    -1"}
        for key in ("out_of_place", "in_place"):
            t = (25.0 + size * factor / (180.0 * 1e3)) * math.exp(rng.gauss(0, 0.01))
            alg = size / t / 1e3
            rec[key] = {"time": round(t, 6), "alg_bw": round(alg, 6), "bus_bw": round(alg * factor, 6), "nwrong": 0.0}
        rec["actual_iterations"] = 20
        rec["experiment_name"] = ""
        results.append(rec)
    return {
        "version": 2, "start_time": "2026-11-20 09:12:44", "args": ["./build/all_reduce_perf", "-b", "1K", "-e", "1G",
                                                                     "-f", "16", "-J", "ar.json"],
        "env": ["NCCL_DEBUG=WARN"], "nccl_version": 22703,
        "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": 1024, "maximum_bytes": 1073741824, "step_factor": 16,
                   "warmup_iters": 5, "iterations": 20, "aggregated_iterations": 1, "validation": 1, "graph": 0,
                   "blocking_collectives": "false", "per_iter_timing": "false", "parallel_init": "false",
                   "devices": [{"rank": r, "group": 0, "pid": 900 + r, "hostname": "p6-node-a", "device": r,
                                "device_hex": f"0000:{0x10 + r:02x}:00", "device_info": "NVIDIA B200"}
                               for r in range(ranks)]},
        "results": results,
        "out_of_bounds": {"count": 0, "okay": "true"},
        "average_bus_bandwidth": {"bandwidth": 120.5, "okay": "unchecked"},
        "errors": [], "end_time": "2026-11-20 09:13:02"}


def osu(full, seed=9):
    rng = random.Random(seed)
    lines = ["", "# OSU MPI Allreduce Latency Test v7.4", "# Datatype: MPI_FLOAT."]
    if full:
        lines.append("# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations")
    else:
        lines.append("# Size       Avg Latency(us)")
    size = 4
    while size <= 1 << 20:
        avg = (0.19 + size / 9000.0) * math.exp(rng.gauss(0, 0.02))
        if full:
            iters = 1000 if size <= 8192 else 100
            lines.append(f"{size:<10d}{avg:18.2f}{avg * 0.93:18.2f}{avg * 1.08:18.2f}{iters:12d}")
        else:
            lines.append(f"{size:<10d}{avg:18.2f}")
        size *= 2
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    (HERE / "nccl-tests-allreduce.txt").write_text(nccl_text())
    (HERE / "nccl-tests-allreduce-mpirun.txt").write_text(nccl_text(prefix="[1,{rank}]<stdout>:"))
    (HERE / "nccl-tests-allreduce.json").write_text(json.dumps(nccl_json()))
    (HERE / "osu-allreduce.txt").write_text(osu(False))
    (HERE / "osu-allreduce-full.txt").write_text(osu(True))
