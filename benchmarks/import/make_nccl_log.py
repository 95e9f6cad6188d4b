#!/usr/bin/python3
"""Writes an nccl-tests all_reduce_perf text log of about SIZE_MB megabytes: the header of a
16-rank run, then the size table repeated (as when many runs are concatenated into one log).
usage: make_nccl_log.py OUT SIZE_MB"""
import sys

out, size_mb = sys.argv[1], float(sys.argv[2])
header = ["# nccl-tests version 2.14.1 nccl-headers=22602 nccl-library=22602",
          "# Collective test starting: all_reduce_perf",
          "# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 "
          "agg iters: 1 validation: 1 graph: 0", "#", "# Using devices"]
for r in range(16):
    header.append(f"#  Rank {r:2d} Group  0 Pid {4100 + r:6d} on ip-10-1-0-{11 + r // 8} device {r % 8:2d} "
                  f"[0000:53:00] NVIDIA H200")
header += ["#",
           "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
           "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "]
target = int(size_mb * 1e6)
written = 0
with open(out, "w") as f:
    text = "\n".join(header) + "\n"
    f.write(text)
    written += len(text)
    k = 0
    while written < target:
        size = 8 << (k % 28)
        t = 30.0 + size / 180e3 + (k % 7) * 0.01
        alg = size / t / 1e3
        bus = alg * 2 * 15 / 16
        line = (f"{size:12d}  {size // 4:12d}     float     sum      -1  {t:7.2f}  {alg:6.2f}  {bus:6.2f}       0"
                f"  {t:7.2f}  {alg:6.2f}  {bus:6.2f}       0\n")
        f.write(line)
        written += len(line)
        k += 1
