#!/usr/bin/python3
"""Writes the hand-made result files the report tests read (schema_version 1, docs/result-format.md).

Deterministic (fixed seed): rerun it and the files do not change. The numbers follow a simple
latency + size/bandwidth model with log-normal noise, at magnitudes seen on the real instances
(2 nodes x 8 GPUs); they are test inputs, not measurements.
"""
import json
import math
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ELT = {"float": 4}
FACTOR = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
}


def binom_half_cdf(n, k):
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


def median_ci(sorted_values):
    n = len(sorted_values)
    k = 0
    while k + 1 <= n // 2 and binom_half_cdf(n, k) <= 0.025:
        k += 1
    if k == 0:
        return sorted_values[0], sorted_values[-1]
    return sorted_values[k], sorted_values[n - 1 - k]


def quantile(sorted_values, q):
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def count_for(op, nbytes, ranks, elt):
    if op in ("allgather", "reduce_scatter", "alltoall"):
        count = nbytes // elt // ranks
        return count, count * ranks * elt
    count = nbytes // elt
    return count, count * elt


def make_rows(rng, backend, ranks, ops, sizes, trials, model, in_place_modes=(False,)):
    rows = []
    for trial in range(trials):
        for op in ops:
            for in_place in in_place_modes:
                for nominal in sizes:
                    count, nbytes = count_for(op, nominal, ranks, ELT["float"])
                    if count == 0:
                        continue
                    lat_us, peak_busbw = model[op]
                    factor = FACTOR[op](ranks)
                    # time = latency + bytes moved on the bus / peak bus bandwidth
                    t = lat_us + nbytes * factor / (peak_busbw * 1e3)
                    n = rng.randint(12, 40)
                    samples = [round(t * math.exp(rng.gauss(0, 0.03)) * (1.0 + 0.2 * (rng.random() < 0.05)), 3)
                               for _ in range(n)]
                    s = sorted(samples)
                    median = quantile(s, 0.5)
                    lo, hi = median_ci(s)
                    algbw = nbytes / (median * 1e3)
                    rows.append({
                        "op": op, "backend": backend, "dtype": "float",
                        "redop": "sum" if op in ("allreduce", "reduce_scatter") else "none",
                        "in_place": in_place, "root": 0 if op == "broadcast" else -1,
                        "bytes": nbytes, "count": count, "ranks": ranks, "trial": trial,
                        "samples_us": samples, "batch": 8 if nbytes <= 65536 else 1, "samples_kind": "raw",
                        "time_us": {"min": s[0], "median": median, "mean": round(sum(s) / n, 4),
                                    "p99": round(quantile(s, 0.99), 4), "max": s[-1], "ci95": [lo, hi]},
                        "algbw_gbps": round(algbw, 6), "busbw_gbps": round(algbw * factor, 6),
                        "wrong": 0, "ci_target_met": (max(median - lo, hi - median) / median) <= 0.01,
                    })
    return rows


def efa(devices, device_id):
    return [{"name": f"rdmap{i}s0", "vendor_id": "0x1d0f", "device_id": device_id, "subsystem_id": "0xefa0"}
            for i in range(devices)]


def nccl_file(rng, instance, gpu, efa_devices, efa_device_id, generation, model, label, nccl, started):
    hosts = [{"hostname": f"ip-10-0-{i}-{17 + i}", "cpu": "Intel(R) Xeon(R) Platinum 8488C",
              "gpus": [{"index": g, "name": gpu, "uuid": f"GPU-{i}{g}00000-0000"} for g in range(8)],
              "efa": efa(efa_devices, efa_device_id)} for i in range(2)]
    sizes = [8 << (2 * k) for k in range(14)]  # 8 B .. 512 MiB, factor 4
    ops = ["allreduce", "allgather", "alltoall"]
    return {
        "schema_version": 1,
        "tool": {"name": "ccbench", "version": "0.1.0", "git": "3f2c1ab"},
        "run": {"status": "complete", "started_at": started, "finished_at": started.replace(":02:", ":19:"),
                "command": ["ccbench", "run", "--backend", "nccl", "-b", "8", "-e", "512M", "-f", "4", "--trials", "2",
                            "--label", label],
                "label": label, "exit_code": 0, "error": None},
        "system": {"instance_type": instance, "nodes": 2, "ranks": 16, "ranks_per_node": 8, "hosts": hosts},
        "fabric": {"path": "mixed", "provider": "efa", "generation": generation, "link_gbps": 3200},
        "software": {"mpi": "Open MPI 4.1.7 (/opt/amazon/openmpi)", "nccl": nccl, "cuda": "12.8",
                     "libfabric": "2.1.0amzn3.0", "ofi_nccl": "1.14.2"},
        "environment": {"FI_PROVIDER": "efa", "FI_EFA_FORK_SAFE": "1", "NCCL_DEBUG": "INFO",
                        "NCCL_SOCKET_IFNAME": "^docker,lo,veth"},
        "config": {"backend": "nccl", "ops": ops, "dtype": "float", "redop": "sum",
                   "timing": {"method": "ccbench", "sample": "max over ranks after a barrier",
                              "target_ci": 0.01, "max_time_per_size_s": 5},
                   "iters": "auto", "warmup": 5, "trials": 2, "min_bytes": 8, "max_bytes": 536870912,
                   "step_factor": 4, "check": 1, "in_place": "no"},
        "results": make_rows(rng, "nccl", 16, ops, sizes, 2, model),
    }


def mpi_file(rng):
    sizes = [8 << k for k in range(0, 23, 2)]  # 8 B .. 32 MiB
    ops = ["allreduce", "allgather", "alltoall"]
    model = {"allreduce": (0.25, 9.0), "allgather": (0.3, 6.0), "alltoall": (0.3, 6.5)}
    return {
        "schema_version": 1,
        "tool": {"name": "ccbench", "version": "0.1.0", "git": "3f2c1ab"},
        "run": {"status": "complete", "started_at": "2026-11-30T09:12:01.004Z",
                "finished_at": "2026-11-30T09:12:09.851Z",
                "command": ["mpirun", "-np", "2", "ccbench", "run", "--backend", "mpi", "--in-place", "both"],
                "label": "laptop \"shm\" run", "exit_code": 0, "error": None},
        "system": {"instance_type": "Standard PC (i440FX + PIIX, 1996)", "nodes": 1, "ranks": 2,
                   "ranks_per_node": 2,
                   "hosts": [{"hostname": "vm", "cpu": "AMD EPYC 7B13", "gpus": [], "efa": []}]},
        "fabric": {"path": "shm", "provider": None, "generation": None, "link_gbps": None},
        "software": {"mpi": "Open MPI 4.1.4", "nccl": None, "cuda": None, "libfabric": "1.17.0", "ofi_nccl": None},
        "environment": {},
        "config": {"backend": "mpi", "ops": ops, "dtype": "float", "redop": "sum",
                   "timing": {"method": "ccbench", "target_ci": 0.01}, "iters": "auto", "warmup": 5, "trials": 1,
                   "in_place": "both"},
        "results": make_rows(rng, "mpi", 2, ops, sizes, 1, model, in_place_modes=(False, True)),
    }


def main():
    rng = random.Random(20261130)
    p5en = nccl_file(rng, "p5en.48xlarge", "NVIDIA H200", 16, "0xefa2", "v3",
                     {"allreduce": (38.0, 360.0), "allgather": (30.0, 340.0), "alltoall": (45.0, 300.0)},
                     "p5en EFAv3", "2.26.2", "2026-11-28T14:02:11.120Z")
    b200 = nccl_file(rng, "p6-b200.48xlarge", "NVIDIA B200", 8, "0xefa3", "v4",
                     {"allreduce": (34.0, 418.0), "allgather": (27.0, 395.0), "alltoall": (41.0, 352.0)},
                     "p6-b200 EFAv4", "2.27.3", "2026-11-29T08:02:40.310Z")
    files = {"p5en-nccl.json": p5en, "p6-b200-nccl.json": b200, "local-mpi.json": mpi_file(rng)}
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    for name, content in files.items():
        (out_dir / name).write_text(json.dumps(content, indent=1) + "\n")


if __name__ == "__main__":
    main()
