#!/usr/bin/env bash
# The default quick sweep (3 ops, 8 B..64 MiB, factor 2, 2 ranks, -n auto): wall time, how many
# sizes met the CI target, and the peak memory per rank against the bound of 2 buffers of the
# largest size + 64 MiB. Target: under 60 s on the 2-core machine.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s.%N)
mpirun -np 2 --oversubscribe --bind-to none "$build/ccbench" run --config "$root/configs/sweeps/quick.yaml" \
  -J "$tmp/quick.json" >"$tmp/table.txt"
end=$(date +%s.%N)
/usr/bin/python3 - "$tmp/quick.json" "$start" "$end" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1])); wall = float(sys.argv[3]) - float(sys.argv[2])
rows = doc["results"]; met = sum(r["ci_target_met"] for r in rows)
largest = max(r["bytes"] for r in rows)
bound = 2 * largest + 64 * 2**20
peak = doc["run"]["peak_rss_bytes"]
print(f"quick sweep: {wall:.1f} s wall (target < 60 s), {len(rows)} results, {met} met the ±1% CI target")
print(f"peak memory per rank: {peak / 2**20:.1f} MiB; bound 2 x {largest / 2**20:.0f} MiB + 64 MiB = "
      f"{bound / 2**20:.0f} MiB -> {'within' if peak <= bound else 'OVER'}")
PY
