#!/usr/bin/env bash
# GPU check of the NCCL backend, in one go, on a machine with at least one NVIDIA GPU:
#   1. configure and build with -DCCBENCH_WITH_NCCL=ON (only the targets needed here),
#   2. the GPU unit tests (fill/verify kernels: every dtype/op/redop, random sizes, poisoned outputs),
#   3. a 1-rank NCCL sweep of every op and dtype (every redop for the reductions), check on,
#      in-place and out-of-place, with and without CUDA graphs,
#   3b. with 4 GPUs or more: --groups mod:2 and div:2 on 4 ranks (a communicator per group),
#   4. a short timing run,
# then a summary table. Exit 0 only when every step passed.
#
#   scripts/device-check.sh [BUILD_DIR]          (default build-device)
#   CCBENCH_DEVICE_QUICK=1 scripts/device-check.sh   fewer sizes, for a tight time budget
#
# CUDA_HOME / NCCL_HOME are honoured by CMake; CMAKE_CUDA_ARCHITECTURES defaults to 90;100
# (set CUDAARCHS=80 or similar for older GPUs).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-device}
out=${CCBENCH_DEVICE_OUT:-${OUT:-$build/device-check}}
mkdir -p "$out"
jobs=$(nproc 2>/dev/null || echo 2)
quick=${CCBENCH_DEVICE_QUICK:-0}

declare -a rows=()
failed=0
record() {  # record STEP STATUS DETAIL
  rows+=("$(printf '%-44s %-6s %s' "$1" "$2" "$3")")
  [ "$2" = "ok" ] || [ "$2" = "skip" ] || failed=$((failed + 1))
}

summary() {
  echo
  echo "================ device-check summary ================"
  nvidia-smi --query-gpu=index,name,memory.total,pci.bus_id,driver_version --format=csv,noheader 2>/dev/null |
    sed 's/^/# gpu: /'
  printf '%-44s %-6s %s\n' "step" "status" "detail"
  for row in "${rows[@]}"; do echo "$row"; done
  echo "result files: $out"
  if [ "$failed" -eq 0 ]; then echo "DEVICE CHECK PASSED"; else echo "DEVICE CHECK FAILED ($failed steps)"; fi
}
trap summary EXIT

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "device-check: no GPU visible (nvidia-smi -L failed)" >&2
  record "gpu visible" fail "nvidia-smi -L failed"
  exit 2
fi
nvidia-smi -L

# --- 1. build -----------------------------------------------------------------------------------
start=$(date +%s)
if cmake -S "$root" -B "$build" -DCCBENCH_WITH_NCCL=ON -DCCBENCH_BUILD_BENCHMARKS=OFF \
     -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1 &&
   cmake --build "$build" -j "$jobs" --target ccbench ccbench_nccl_gpu_tests ccbench_nccl_unit_tests \
     >"$out/build.log" 2>&1; then
  record "build (NCCL on)" ok "$(($(date +%s) - start)) s, $(grep -o 'NCCL backend ON.*' "$out/configure.log" | head -1)"
else
  tail -40 "$out/configure.log" "$out/build.log" 2>/dev/null
  record "build (NCCL on)" fail "see $out/build.log"
  exit 1
fi
ccbench=$build/ccbench

# --- 2. unit tests ------------------------------------------------------------------------------
for t in ccbench_nccl_gpu_tests ccbench_nccl_unit_tests; do
  exe=$(find "$build/tests" -name "$t" -type f -perm -u+x | head -1)
  if "$exe" --gtest_brief=1 >"$out/$t.log" 2>&1; then
    detail=$(grep -E '^\[  PASSED  \]|SKIPPED' "$out/$t.log" | tr '\n' ' ')
    if grep -q 'SKIPPED' "$out/$t.log" && [ "$t" = ccbench_nccl_gpu_tests ]; then
      record "$t" fail "skipped on a GPU machine: $(grep -m1 -A1 'Skipped' "$out/$t.log" | tail -1)"
    else
      record "$t" ok "$detail"
    fi
  else
    tail -30 "$out/$t.log"
    record "$t" fail "$(grep -c '^\[  FAILED' "$out/$t.log") failed, see $out/$t.log"
  fi
done

# --- 3. 1-rank sweep of every op and dtype --------------------------------------------------------
mpi=(mpirun -np 1)
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  mpi+=(--oversubscribe --bind-to none)
  [ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
fi
max_bytes=16M
[ "$quick" = 1 ] && max_bytes=1M

# run NAME ARGS...: one ccbench run, recorded with its results and wrong count.
run() {
  local name=$1
  shift
  local json=$out/$name.json
  local t0
  t0=$(date +%s)
  "${mpi[@]}" "$ccbench" run --backend nccl -J "$json" --progress never -T 120 "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local results wrong
  results=$(grep -o '^# [0-9]* results' "$out/$name.log" | grep -o '[0-9]*' | head -1)
  wrong=$(grep -o '[0-9]* wrong elements' "$out/$name.log" | grep -o '^[0-9]*' | head -1)
  local detail="exit $rc, ${results:-0} results, ${wrong:-?} wrong, $(($(date +%s) - t0)) s"
  if [ "$rc" -eq 0 ] && [ "${results:-0}" -gt 0 ]; then
    record "$name" ok "$detail"
  else
    tail -15 "$out/$name.log"
    record "$name" fail "$detail, see $out/$name.log"
  fi
}

all_ops=allreduce,allgather,alltoall,reduce_scatter,broadcast
for dtype in int8 uint8 int32 int64 float double half bfloat16 fp8_e4m3 fp8_e5m2; do
  run "sweep-$dtype-sum" --ops "$all_ops" -d "$dtype" -o sum -b 1K -e "$max_bytes" -f 4 -n 5 -w 2 --in-place both -c 1
  for redop in prod min max avg; do
    run "sweep-$dtype-$redop" --ops allreduce,reduce_scatter -d "$dtype" -o "$redop" -b 1K -e "$max_bytes" -f 16 \
      -n 3 -w 1 --in-place both -c 1
  done
done
run "sweep-graphs-G4" --ops "$all_ops" -d float -b 1K -e "$max_bytes" -f 8 -n 5 -w 2 -G 4 -c 1
run "sweep-bf16-avg-G2" --ops allreduce,reduce_scatter -d bfloat16 -o avg -b 1K -e 1M -f 32 -n 3 -G 2 -c 1

# The data check must catch a corrupted element: exit 1.
CCBENCH_TEST_CORRUPT_RANK=0 "${mpi[@]}" "$ccbench" run --backend nccl --ops allreduce -b 1M -e 1M -n 3 \
  --progress never >"$out/corrupt.log" 2>&1
rc=$?
if [ "$rc" -eq 1 ]; then record "corrupted output is caught" ok "exit 1"; else record "corrupted output is caught" fail "exit $rc"; fi

# --- 3b. concurrent groups (--groups): 2 groups of 2 ranks need 4 GPUs (one GPU per rank) ----------
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$gpus" -ge 4 ]; then
  mpi1=("${mpi[@]}")
  mpi=("${mpi1[0]}" -np 4 "${mpi1[@]:3}")
  for spec in mod:2 div:2; do
    run "groups-$spec" --groups "$spec" --ops "$all_ops" -d float -b 1K -e "$max_bytes" -f 16 -n 3 -w 1 -c 1
    python3 -c "import json, sys; d = json.load(open(sys.argv[1])); g = d['config']['groups']; \
assert g['count'] == 2 and g['ranks_per_group'] == 2, g; \
assert all(r['groups']['wrong_per_group'] == [0, 0] for r in d['results'])" "$out/groups-$spec.json" 2>"$out/groups-$spec.check" ||
      record "groups-$spec layout and per-group check" fail "$(tail -1 "$out/groups-$spec.check")"
  done
  mpi=("${mpi1[@]}")
else
  record "groups (mod:2, div:2 on 4 ranks)" skip "needs 4 GPUs (2 groups of 2 ranks, one GPU each), found $gpus"
fi

# --- 4. short timing run ------------------------------------------------------------------------
timing_max=1G
[ "$quick" = 1 ] && timing_max=256M
run "timing-allreduce-float" --ops allreduce,allgather,reduce_scatter -d float -b 8 -e "$timing_max" -f 8 -c 0 --in-place no
echo
echo "---- timing run (allreduce/allgather/reduce_scatter, float, 1 rank) ----"
grep -vE '^#' "$out/timing-allreduce-float.log" | head -60

# Metadata the result file recorded (NCCL version, net plugin, GPUs, fabric).
if command -v python3 >/dev/null 2>&1 && [ -f "$out/timing-allreduce-float.json" ]; then
  python3 - "$out/timing-allreduce-float.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sw = d.get("software", {})
print("---- metadata ----")
for k in ("nccl", "nccl_build", "cuda_runtime", "cuda_driver", "net_plugin", "alltoall", "gpu_buffer_budget_bytes"):
    print(f"{k:>24}: {sw.get(k)}")
for g in sw.get("gpus", []):
    print(f"{'gpu':>24}: rank {g['rank']} {g['name']} {g['memory_bytes'] / 2**30:.0f} GiB {g['pci_bus_id']} cc {g['compute_capability']}")
print(f"{'fabric':>24}: {d.get('fabric')}")
PY
fi

[ "$failed" -eq 0 ]
