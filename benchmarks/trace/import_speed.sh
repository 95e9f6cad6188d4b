#!/usr/bin/env bash
# Import speed and peak memory of `ccbench trace import` on a synthetic trace of CALLS calls (10^6 by
# default) as NCCL debug logs of RANKS ranks, and of `ccbench trace show` reading the trace back.
# Prints calls/s and peak RSS for each, and the peak RSS of a tenth of the calls beside it: import
# memory bounded means the two peaks are about equal (it streams); show holds the calls, so its
# memory grows with them. Not a CI test (no timing in CI).
#   benchmarks/trace/import_speed.sh [build-dir]     CALLS=1000000 RANKS=4
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build}
/usr/bin/python3 - "$build/ccbench" "${CALLS:-1000000}" "${RANKS:-4}" <<'PY'
import os, resource, shutil, subprocess, sys, tempfile, time
ccbench, calls, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ops = [("AllReduce", 7, 0), ("AllGather", 9, 0), ("ReduceScatter", 6, 0), ("Broadcast", 4, 0)]

def write_logs(folder, total):
    per_rank = total // ranks
    paths = []
    for r in range(ranks):
        path = os.path.join(folder, f"nccl_rank{r}.log")
        with open(path, "w") as f:
            f.write(f"h:{r}:{r} [{r}] NCCL INFO comm 0x{r:x}00 rank {r} nranks {ranks} cudaDev {r} nvmlDev {r} "
                    f"busId {r}000 commId 0xfeed - Init COMPLETE\n")
            for i in range(per_rank):
                name, dtype, op = ops[i % len(ops)]
                f.write(f"h:{r}:{r} [{r}] NCCL INFO {name}: opCount {i:x} sendbuff 0x7f00 recvbuff 0x7f00 "
                        f"count {1 << (i % 20)} datatype {dtype} op {op} root 0 comm 0x{r:x}00 [nranks={ranks}] "
                        f"stream 0x9\n")
        paths.append(path)
    return paths, per_rank * ranks

def timed(argv):
    """Wall seconds and the child's peak RSS in MiB (wait4's rusage of that one child)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(argv)}: {proc.stderr.read().decode()}")
    return seconds, usage.ru_maxrss / 1024

folder = tempfile.mkdtemp(prefix="ccbench-trace-bench-")
try:
    for n in (calls // 10, calls):
        sub = os.path.join(folder, str(n))
        os.mkdir(sub)
        logs, total = write_logs(sub, n)
        out = os.path.join(sub, "t.json")
        s, rss = timed([ccbench, "trace", "import", "nccl-log", *logs, "--out", out])
        print(f"import {total:>8} calls: {s:6.2f} s, {total / s:>10.0f} calls/s, peak RSS {rss:7.1f} MiB "
              f"(logs {sum(os.path.getsize(p) for p in logs) / 2**20:.0f} MiB, trace {os.path.getsize(out) / 2**20:.0f} MiB)")
        s, rss = timed([ccbench, "trace", "show", out])
        print(f"show   {total:>8} calls: {s:6.2f} s, {total / s:>10.0f} calls/s, peak RSS {rss:7.1f} MiB")
finally:
    shutil.rmtree(folder)
PY
