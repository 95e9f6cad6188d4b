#!/usr/bin/env bash
# `ccbench replay`'s overhead: a call-heavy trace of small messages (CALLS calls a step on 2 ranks:
# allreduce of 2 to 256 floats, allgather, broadcast, alltoall) replayed with no gaps and no data
# check, against a bare MPI loop issuing the same sequence (benchmarks/replay/bare_mpi_sequence),
# interleaved in one run so both see the same machine. Prints each side's median step time (the
# median of ROUNDS launches) and the ratio replay / bare. Target: <= 1.05.
#   benchmarks/replay/overhead.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun=(mpirun -np 2 --oversubscribe --bind-to none)
calls=${CALLS:-400}
steps=${STEPS:-200}
rounds=${ROUNDS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The trace and the bare loop's sequence, from one list of calls.
/usr/bin/python3 - "$tmp" "$calls" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
kinds = [("allreduce", 2), ("allreduce", 16), ("allgather", 8), ("allreduce", 256), ("broadcast", 32),
         ("alltoall", 64), ("allreduce", 64)]
seq = [kinds[i % len(kinds)] for i in range(n)]
def call(op, count):
    c = {"op": op, "dtype": "float", "count": count, "group": "world", "origin": "nccl_log", "gap_us": 0}
    if op == "allreduce": c["redop"] = "sum"
    if op == "broadcast": c["root"] = 0
    return c
trace = {"trace_version": 1, "world_size": 2,
         "groups": [{"id": "world", "ranks": [0, 1], "members_from_source": True}],
         "ranks": [{"rank": r, "file": f"bench_rank{r}", "calls": [call(*c) for c in seq]} for r in range(2)],
         "provenance": {"format": "nccl-log", "source": "benchmarks/replay/overhead.sh", "source_version": "",
                        "tool_version": "", "not_in_source": []}}
json.dump(trace, open(f"{out}/bench.trace.json", "w"))
open(f"{out}/bench.sequence", "w").write("".join(f"{op} {count}\n" for op, count in seq))
PY
replay=() bare=()
for ((r = 0; r < rounds; r++)); do
  "${mpirun[@]}" "$build/ccbench" replay "$tmp/bench.trace.json" --steps "$steps" --gaps none -c 0 \
    -J "$tmp/r.json" >/dev/null
  replay+=("$(/usr/bin/python3 -c "import json,sys; print([r for r in json.load(open(sys.argv[1]))['results'] if r['op'] == 'replay_step'][0]['time_us']['median'])" "$tmp/r.json")")
  bare+=("$("${mpirun[@]}" "$build/benchmarks/replay/bare_mpi_sequence" "$tmp/bench.sequence" "$steps")")
done
/usr/bin/python3 - "$calls" "${replay[*]}" "${bare[*]}" <<'PY'
import statistics, sys
calls, rp, bare = sys.argv[1:]
rp = list(map(float, rp.split())); bare = list(map(float, bare.split()))
r, b = statistics.median(rp), statistics.median(bare)
print(f"calls per step {calls}, 2 ranks; per launch: replay {' '.join(f'{x:.1f}' for x in rp)} us, bare {' '.join(f'{x:.1f}' for x in bare)} us")
print(f"step time: replay {r:.1f} us, bare MPI {b:.1f} us, ratio {r / b:.3f} (target <= 1.05)")
PY
