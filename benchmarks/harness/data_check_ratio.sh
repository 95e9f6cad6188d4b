#!/usr/bin/env bash
# The data fill and check against plain memory traffic in the same run (issue 15 item 17): verify
# vs reading the buffer once, fill vs writing the send and receive buffers. Target: ratios near 1
# for 64 MiB (the check compares with one period of the pattern; it used to hash every element of
# every rank: 0.19 GB/s). CPU-time rates, so a busy machine does not distort them.
#   benchmarks/harness/data_check_ratio.sh [build dir]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bench=${1:-$root/build}/benchmarks/harness/harness_bench
[[ -x $bench ]] || { echo "data_check_ratio.sh: no $bench (build the harness_bench target)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$bench" --benchmark_filter='Fill|Verify|Reference' --benchmark_format=json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
rate = {b["name"]: b["bytes_per_second"] for b in json.load(sys.stdin)["benchmarks"]}
print("      size  verify GB/s  read GB/s  verify/read  fill GB/s  write GB/s  fill/write")
for arg in ("1048576", "67108864"):
    v, r = rate[f"BM_Verify/{arg}"], rate[f"BM_ReadReference/{arg}"]
    f, w = rate[f"BM_Fill/{arg}"], rate[f"BM_WriteReference/{arg}"]
    print(f"{int(arg) >> 20:>7} MiB {v / 1e9:12.2f} {r / 1e9:10.2f} {v / r:12.2f} {f / 1e9:10.2f} {w / 1e9:11.2f} {f / w:11.2f}")
'
