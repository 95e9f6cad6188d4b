#!/usr/bin/env bash
# Start-up time of the commands that do not measure, against references timed in the same run,
# interleaved round by round so all see the same machine:
#   /bin/true                      the floor (fork + exec)
#   ccbench compare --help         the analysis executable (no MPI library loaded)
#   ccbench-measure --version      the MPI-linked executable doing nothing: loading libmpi alone
#                                  (its transports' constructors probe the hardware); this is what
#                                  every command cost while one executable linked MPI
# Target: compare --help well under the MPI-linked reference (ratio printed; < 0.2 on this machine).
#   benchmarks/startup_time.sh [build-dir]      (ROUNDS=50 by default)
#   BEFORE=/path/to/old/ccbench benchmarks/startup_time.sh   also times an older single-executable
#                                                             build's `compare --help`
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
/usr/bin/python3 - "$build" "${ROUNDS:-50}" "${BEFORE:-}" <<'PY'
import statistics, subprocess, sys, time
build, rounds, before = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cases = {
    "/bin/true": ["/bin/true"],
    "ccbench compare --help": [f"{build}/ccbench", "compare", "--help"],
    "ccbench --help": [f"{build}/ccbench", "--help"],
    "ccbench-measure --version (MPI linked)": [f"{build}/ccbench-measure", "--version"],
}
if before:
    cases["before: compare --help (" + before + ")"] = [before, "compare", "--help"]
times = {name: [] for name in cases}
for _ in range(rounds):
    for name, argv in cases.items():
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times[name].append(time.perf_counter() - t0)
ref = statistics.median(times["ccbench-measure --version (MPI linked)"])
width = max(len(n) for n in cases)
print(f"{'command':{width}s} {'median ms':>10s} {'min ms':>8s} {'vs MPI-linked':>14s}")
for name, t in times.items():
    m = statistics.median(t)
    print(f"{name:{width}s} {m * 1e3:10.2f} {min(t) * 1e3:8.2f} {m / ref:14.3f}")
PY
