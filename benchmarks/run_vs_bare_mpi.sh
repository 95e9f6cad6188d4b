#!/usr/bin/env bash
# ccbench's reported median latency against a bare MPI loop timed the same way (barrier, the same
# batch of back-to-back ops, max over ranks, median), at 8 B, 64 KiB, 1 MiB and 16 MiB on 2 ranks,
# in one run, interleaved, so both see the same machine. Target: every ratio within 1.05 of 1.
#   benchmarks/run_vs_bare_mpi.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun=(mpirun -np 2 --oversubscribe --bind-to none)
samples=${SAMPLES:-300}
rounds=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf "%-10s %-8s %6s %14s %14s %8s\n" op size batch "ccbench(us)" "bare MPI(us)" ratio
for op in ${OPS:-allreduce}; do
  for size in 8 65536 1048576 16777216; do
    cc=() bare=() batch=1
    for ((r = 0; r < rounds; r++)); do
      "${mpirun[@]}" "$build/ccbench" run --ops "$op" -b "$size" -e "$size" -n "$samples" -w 5 --in-place no \
        -c 0 -J "$tmp/r.json" >/dev/null
      read -r med batch < <(/usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print(r['time_us']['median'], r['batch'])" "$tmp/r.json")
      cc+=("$med")
      bare+=("$("${mpirun[@]}" "$build/benchmarks/harness/bare_mpi_loop" "$op" "$size" "$batch" "$samples")")
    done
    # Median of the rounds on each side, then the ratio.
    /usr/bin/python3 - "$op" "$size" "$batch" "${cc[*]}" "${bare[*]}" <<'PY'
import statistics, sys
op, size, batch, cc, bare = sys.argv[1:]
c = statistics.median(map(float, cc.split())); b = statistics.median(map(float, bare.split()))
print(f"{op:<10} {size:<8} {batch:>6} {c:>14.3f} {b:>14.3f} {c / b:>8.3f}")
PY
  done
done
