#!/usr/bin/env bash
# The NCCL backend's GPU check, prepared to run in one go on a GPU machine without network access
# (under 8 minutes on one H200 including the build). docs/nccl-backend.md, "Device check", says
# which defect each step would catch.
#
#   scripts/device-check.sh [--nccl-tests DIR] [--build DIR] [--dry-run]
#
#   --nccl-tests DIR   an NVIDIA nccl-tests source tree the caller carries (the device has no network;
#                      also NCCL_TESTS_SRC=DIR): built here against the same NCCL as ccbench, for the
#                      timing comparison. Without it that step is recorded as skipped.
#   --build DIR        ccbench's build directory (default build-device; ccache is used when present)
#   --dry-run          print the steps and their commands' shape, run nothing (no GPU needed)
#
# Environment: CUDAARCHS (default 90: H100/H200), CUDA_HOME / NCCL_HOME (found by CMake otherwise),
# CCBENCH_DEVICE_OUT (logs and result files; default $OUT or BUILD/device-check), CCBENCH_DEVICE_QUICK=1
# (fewer dtypes and sizes).
#
# Steps: 1 build only the NCCL targets (ccache) and, beside it, nccl-tests' perf binaries;
# 2 the host and GPU unit tests; 3 one GPU: every op and dtype checked, in- and out-of-place, -G;
# 4 timing against nccl-tests on the same GPU(s), the algbw/busbw ratio printed; 5 with 2 or more
# GPUs: every op in- and out-of-place across ranks, groups, -G teardown under the watchdog, a killed
# rank. Then one summary table. Exit 0 when every step passed, 1 when one failed, 77 when no GPU is
# visible (nothing was checked), 2 for a bad argument.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-device
nccl_tests_src=${NCCL_TESTS_SRC:-}
dry_run=0
usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case $1 in
    --nccl-tests) nccl_tests_src=${2:-}; shift 2 ;;
    --nccl-tests=*) nccl_tests_src=${1#*=}; shift ;;
    --build) build=${2:-}; shift 2 ;;
    --build=*) build=${1#*=}; shift ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "device-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$nccl_tests_src" ] && [ ! -f "$nccl_tests_src/src/Makefile" ]; then
  echo "device-check: --nccl-tests $nccl_tests_src: not an nccl-tests source tree (no src/Makefile)" >&2
  exit 2
fi
[ -n "$nccl_tests_src" ] && nccl_tests_src=$(cd "$nccl_tests_src" && pwd)
out=${CCBENCH_DEVICE_OUT:-${OUT:-$build/device-check}}
quick=${CCBENCH_DEVICE_QUICK:-0}
archs=${CUDAARCHS:-90}
jobs=$(nproc 2>/dev/null || echo 2)
t_start=$(date +%s)

declare -a rows=()
failed=0
skipped_all=0
record() {  # record STEP STATUS DETAIL
  rows+=("$(printf '%-40s %-5s %s' "$1" "$2" "$3")")
  case $2 in ok|skip|plan) ;; *) failed=$((failed + 1)) ;; esac
}
summary() {
  echo
  echo "================ device-check summary ($(($(date +%s) - t_start)) s) ================"
  nvidia-smi --query-gpu=index,name,memory.total,pci.bus_id,driver_version --format=csv,noheader 2>/dev/null |
    sed 's/^/# gpu: /'
  printf '%-40s %-5s %s\n' "step" "state" "detail"
  for row in "${rows[@]}"; do echo "$row"; done
  [ "$dry_run" = 1 ] && { echo "DRY RUN: nothing was run"; return; }
  echo "logs and result files: $out"
  if [ "$skipped_all" = 1 ]; then
    echo "DEVICE CHECK SKIPPED (no GPU visible: nothing was checked)"
  elif [ "$failed" -eq 0 ]; then
    echo "DEVICE CHECK PASSED"
  else
    echo "DEVICE CHECK FAILED ($failed steps)"
  fi
}
trap summary EXIT

# --- what runs -------------------------------------------------------------------------------------
all_ops=allreduce,allgather,alltoall,reduce_scatter,broadcast,sendrecv,gather,scatter,reduce
dtypes=(int8 uint8 int32 int64 float double half bfloat16 fp8_e4m3 fp8_e5m2)
redops=(prod min max avg)
sweep_sizes=(-b 1K -e 1M -f 32)
if [ "$quick" = 1 ]; then
  dtypes=(int8 float bfloat16 fp8_e5m2)
  redops=(avg)
fi
timing_sizes=(-b 8 -e 1G -f 8)
# Timed beside nccl-tests' *_perf of the same op (sendrecv, gather, scatter, reduce: untested on a
# GPU until this step runs them, docs/nccl-backend.md).
timed_ops=allreduce/allgather/reduce_scatter/sendrecv/gather/scatter/reduce
# Buffer registration (-R 1 ncclCommRegister, -R 2 symmetric windows: untested on a GPU until this
# step runs them) beside nccl-tests' -R of the same build, on three sizes to keep the step short.
registered_ops=allreduce/sendrecv
registered_sizes=(-b 64K -e 16M -f 16)
[ "$quick" = 1 ] && timing_sizes=(-b 8 -e 256M -f 16)

if [ "$dry_run" = 1 ]; then
  record "1 build (NCCL targets, ccache)" plan "cmake -DCCBENCH_WITH_NCCL=ON CUDAARCHS=$archs -> $build"
  if [ -n "$nccl_tests_src" ]; then
    record "1 build nccl-tests" plan "make -C $nccl_tests_src/src (sm_$archs, same NCCL)"
  else
    record "1 build nccl-tests" skip "no nccl-tests source (--nccl-tests DIR or NCCL_TESTS_SRC)"
  fi
  record "2 unit tests (host, GPU kernels)" plan "ccbench_nccl_unit_tests, ccbench_nccl_gpu_tests"
  record "3 one GPU: ops x dtypes x redops" plan "${#dtypes[@]} dtypes x (sum, ${redops[*]}), in/out-of-place"
  record "3 one GPU: -G, corrupted output" plan "-G 4 every op; CCBENCH_TEST_CORRUPT_RANK=0 exits 1"
  record "4 timing vs nccl-tests" plan "$timed_ops float ${timing_sizes[*]}"
  record "4 timing -R 1, -R 2 vs nccl-tests" plan "$registered_ops float ${registered_sizes[*]}, data checked"
  record "3 one GPU: matrix ops" plan "alltoallv --matrix, --moe dispatch/combine/pair, data checked"
  record "3 one GPU: replay send/recv" plan "a 1-rank trace sending to itself, -c 1 (5: the 2-rank pair)"
  record "5 multi-GPU (2+ GPUs)" plan "every op in/out-of-place, alltoallv even matrix vs alltoall, --moe, --groups, -G teardown, killed rank"
  exit 0
fi

mkdir -p "$out"
if ! command -v nvidia-smi >/dev/null 2>&1; then
  gpu_list="nvidia-smi not found (no NVIDIA driver on this machine)"
  false
elif ! gpu_list=$(nvidia-smi -L 2>&1) || ! grep -q '^GPU' <<<"$gpu_list"; then
  false
fi || {
  echo "device-check: no GPU visible ($(head -1 <<<"$gpu_list")); nothing to check on this machine" >&2
  record "gpu visible" skip "no GPU: $(head -1 <<<"$gpu_list")"
  skipped_all=1
  exit 77
}
echo "$gpu_list"
gpus=$(grep -c '^GPU' <<<"$gpu_list")

# --- 1. build ----------------------------------------------------------------------------------------
launcher=()
command -v ccache >/dev/null 2>&1 &&
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
nccl_home=${NCCL_HOME:-}
if [ -z "$nccl_home" ]; then
  for d in "${CUDA_HOME:-/usr/local/cuda}" /usr; do [ -f "$d/include/nccl.h" ] && nccl_home=$d && break; done
fi
nt_build=$out/nccl-tests-build
nt_pid=
if [ -n "$nccl_tests_src" ]; then
  # nccl-tests beside ccbench's build (both are nvcc-bound; the machine has the cores). Only the
  # perf binaries of ccbench's ops, one architecture, against the NCCL ccbench uses.
  (
    targets=()
    for t in all_reduce all_gather reduce_scatter alltoall broadcast sendrecv gather scatter reduce; do targets+=("$nt_build/${t}_perf"); done
    nice make -C "$nccl_tests_src/src" -j "$jobs" BUILDDIR="$nt_build" CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}" \
      NCCL_HOME="$nccl_home" NVCC_GENCODE="-gencode=arch=compute_${archs%%;*},code=sm_${archs%%;*}" "${targets[@]}"
  ) >"$out/nccl-tests-build.log" 2>&1 &
  nt_pid=$!
fi
t0=$(date +%s)
if cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCCBENCH_WITH_NCCL=ON -DCCBENCH_BUILD_BENCHMARKS=OFF \
     -DCMAKE_CUDA_ARCHITECTURES="$archs" "${launcher[@]}" >"$out/configure.log" 2>&1 &&
   cmake --build "$build" -j "$jobs" --target ccbench ccbench_nccl_gpu_tests ccbench_nccl_unit_tests \
     >"$out/build.log" 2>&1; then
  record "1 build (NCCL targets)" ok "$(($(date +%s) - t0)) s, CUDA archs $archs${launcher:+, ccache}"
else
  tail -30 "$out/configure.log" "$out/build.log" 2>/dev/null
  record "1 build (NCCL targets)" fail "see $out/build.log"
  exit 1
fi
ccbench=$build/ccbench
[ -x "$ccbench" ] || ccbench=$(find "$build" -name ccbench -type f -perm -u+x | head -1)
nt_ok=0
if [ -n "$nt_pid" ]; then
  if wait "$nt_pid" && [ -x "$nt_build/all_reduce_perf" ]; then
    nt_ok=1
    record "1 build nccl-tests" ok "$(grep -c Compiling "$out/nccl-tests-build.log") units, NCCL from $nccl_home"
  else
    tail -20 "$out/nccl-tests-build.log"
    record "1 build nccl-tests" fail "see $out/nccl-tests-build.log"
  fi
else
  record "1 build nccl-tests" skip "no nccl-tests source (--nccl-tests DIR or NCCL_TESTS_SRC)"
fi
# The same libnccl for both (what the timing comparison needs).
lib_of() { ldd "$1" 2>/dev/null | awk '/libnccl\.so/ {print $3; exit}'; }
echo "ccbench libnccl: $(lib_of "$ccbench")"
[ "$nt_ok" = 1 ] && echo "nccl-tests libnccl: $(lib_of "$nt_build/all_reduce_perf")"

# --- 2. unit tests -----------------------------------------------------------------------------------
for t in ccbench_nccl_unit_tests ccbench_nccl_gpu_tests; do
  exe=$(find "$build/tests" -name "$t" -type f -perm -u+x | head -1)
  if [ -z "$exe" ]; then
    record "2 $t" fail "not built"
  elif "$exe" --gtest_brief=1 >"$out/$t.log" 2>&1; then
    if grep -q '\[  SKIPPED' "$out/$t.log" && [ "$t" = ccbench_nccl_gpu_tests ]; then
      record "2 $t" fail "skipped on a GPU machine: $(grep -m1 -A1 'Skipped' "$out/$t.log" | tail -1)"
    else
      record "2 $t" ok "$(grep -o '[0-9]* tests\? from [0-9]* test suites\? ran' "$out/$t.log" | head -1)"
    fi
  else
    tail -30 "$out/$t.log"
    record "2 $t" fail "$(grep -c '^\[  FAILED' "$out/$t.log") failed, see $out/$t.log"
  fi
done

# --- 3. one GPU ----------------------------------------------------------------------------------------
# ccbench needs an MPI runtime; one rank runs as an MPI singleton when mpirun is missing.
mpi_base=()
if command -v mpirun >/dev/null 2>&1; then
  mpi_base=(mpirun --bind-to none)
  mpirun --version 2>&1 | grep -q "Open MPI" && mpi_base+=(--oversubscribe) && [ "$(id -u)" = 0 ] &&
    mpi_base+=(--allow-run-as-root)
fi
launch() {  # launch NP CMD...
  local np=$1
  shift
  if [ ${#mpi_base[@]} -gt 0 ]; then "${mpi_base[@]}" -np "$np" "$@"; elif [ "$np" = 1 ]; then "$@"; else return 127; fi
}

# A step's name as a file name: "3 gpu1 int8 sum" -> 3-gpu1-int8-sum.
slug() { tr -c 'A-Za-z0-9_.\n-' '-' <<<"$1" | tr -s '-'; }

# run NAME NP WALL_S ARGS...: one ccbench run; passes when it exits 0 with results and no wrong element.
run() {
  local name=$1 np=$2 wall=$3
  shift 3
  local t0 rc results wrong
  t0=$(date +%s)
  local file
  file=$(slug "$name")
  launch "$np" timeout -k 5 "$wall" "$ccbench" run --backend nccl -J "$out/$file.json" --progress never -T 60 "$@" \
    >"$out/$file.log" 2>&1
  rc=$?
  results=$(grep -o '^# [0-9]* results' "$out/$file.log" | grep -o '[0-9]*' | head -1)
  wrong=$(grep -o '[0-9]* wrong elements' "$out/$file.log" | grep -o '^[0-9]*' | head -1)
  local detail="exit $rc, ${results:-0} results, ${wrong:-0} wrong, $(($(date +%s) - t0)) s"
  if [ "$rc" -eq 0 ] && [ "${results:-0}" -gt 0 ]; then
    record "$name" ok "$detail"
  else
    [ "$rc" -eq 124 ] && detail="$detail (timed out: a hang)"
    tail -12 "$out/$file.log"
    record "$name" fail "$detail, see $out/$file.log"
  fi
}

for dtype in "${dtypes[@]}"; do
  run "3 gpu1 $dtype sum all ops" 1 120 --ops "$all_ops" -d "$dtype" -o sum "${sweep_sizes[@]}" -n 3 -w 1 -c 1
  for redop in "${redops[@]}"; do
    run "3 gpu1 $dtype $redop" 1 120 --ops allreduce,reduce_scatter,reduce -d "$dtype" -o "$redop" "${sweep_sizes[@]}" \
      -n 3 -w 1 -c 1
  done
done
run "3 gpu1 -G 4 all ops" 1 120 --ops "$all_ops" -d float "${sweep_sizes[@]}" -n 5 -w 1 -G 4 -c 1
run "3 gpu1 -G 2 bfloat16 avg" 1 120 --ops allreduce,reduce_scatter -d bfloat16 -o avg "${sweep_sizes[@]}" -n 3 -G 2
# The matrix ops (alltoallv, moe_*: grouped ncclSend/ncclRecv per peer block, never yet run on a GPU
# before this step): one rank's block to itself, the data check on every block.
printf '4194304\n' >"$out/matrix1.csv"
run "3 gpu1 alltoallv --matrix" 1 120 --matrix "$out/matrix1.csv" -d float -n 5 -c 1 --in-place no
run "3 gpu1 moe dispatch/combine/pair" 1 120 --moe 8,2,4096,1024,hot:0:0.5 -d bfloat16 -n 5 -c 1 --in-place no
# replay's sends and receives (one ncclGroupStart/End group per batch, every receive checked, never
# yet run on a GPU before this step): replay_run NAME NP TRACE passes when the replay exits 0.
replay_run() {
  local name=$1 np=$2 trace=$3 t0 rc file
  t0=$(date +%s)
  file=$(slug "$name")
  launch "$np" timeout -k 5 120 "$ccbench" replay "$trace" --backend nccl --steps 3 --gaps none -c 1 -T 60 \
    -J "$out/$file.json" >"$out/$file.log" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ]; then record "$name" ok "exit 0, $(($(date +%s) - t0)) s"; else
    tail -12 "$out/$file.log"
    record "$name" fail "exit $rc (1: a receive's data wrong, 3: a hang), see $out/$file.log"
  fi
}
# One rank sends 1 Mi floats to itself and receives them in the same batch.
replay_run "3 gpu1 replay send/recv to itself" 1 "$root/tests/data/replay/self_send_recv.trace.json"
# sendrecv --block-bytes (one group of ncclSend/ncclRecv per block, never yet run on a GPU before
# this step): one rank's ring to itself, every block checked. No nccl-tests peer to time it against.
run "3 gpu1 sendrecv ring --block-bytes" 1 120 --ops sendrecv --pattern ring --block-bytes 256K -d float \
  -b 1M -e 64M -f 8 -n 3 -c 1 --in-place no
CCBENCH_TEST_CORRUPT_RANK=0 launch 1 "$ccbench" run --backend nccl --ops allreduce -b 1M -e 1M -n 3 \
  --progress never >"$out/corrupt.log" 2>&1
rc=$?
if [ "$rc" -eq 1 ]; then record "3 gpu1 corrupted output caught" ok "exit 1"; else
  record "3 gpu1 corrupted output caught" fail "exit $rc (want 1)"; fi

# --- 4. timing against nccl-tests ---------------------------------------------------------------------
# Same NCCL, same GPU(s): nccl-tests' out-of-place time per size beside ccbench's median. One GPU:
# busbw is 0 by definition (n = 1), so the ratio is algbw's; with N GPUs both run N ranks (nccl-tests
# as one process with -g N) and the ratio is busbw's.
np_time=1
[ "$gpus" -ge 2 ] && np_time=$((gpus < 8 ? gpus : 8))
if [ "$nt_ok" = 1 ]; then
  declare -A nt_bin=([allreduce]=all_reduce_perf [allgather]=all_gather_perf [reduce_scatter]=reduce_scatter_perf
    [sendrecv]=sendrecv_perf [gather]=gather_perf [scatter]=scatter_perf [reduce]=reduce_perf)
  ratio_rows=()
  # time_pair OP R SIZES...: ccbench beside nccl-tests (both with -R R when R is not 0; -R 1 and 2
  # with ccbench's data check), the ratio row appended.
  time_pair() {
    local op=$1 reg=$2
    shift 2
    local name="4 timing ccbench $op x$np_time" log=$out/nccl-tests-$op.log label=$op
    local ours=(-c 0) theirs=()
    if [ "$reg" != 0 ]; then
      name="$name -R $reg" log=$out/nccl-tests-$op-R$reg.log label="$op -R $reg" ours=(-c 1 -R "$reg") theirs=(-R "$reg")
    fi
    run "$name" "$np_time" 300 --ops "$op" -d float "$@" -n 20 -w 5 "${ours[@]}" --in-place no
    timeout -k 5 300 "$nt_build/${nt_bin[$op]}" "$@" -g "$np_time" -n 20 -w 5 -c 0 "${theirs[@]}" \
      >"$log" 2>&1 || record "4 timing nccl-tests $label" fail "see $log"
    ratio_rows+=("$(python3 - "$out/$(slug "$name").json" "$log" "$label" "$np_time" <<'PY'
import json, sys
res, log, op, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
try:
    rows = json.load(open(res))["results"]
except Exception as e:  # the run step already failed and said why
    print(f"{op}: no ccbench result ({e.__class__.__name__})"); sys.exit(0)
ours = {r["bytes"]: r for r in rows if not r.get("in_place")}
col = "busbw" if n > 1 else "algbw"
out = []
for line in open(log):
    f = line.split()
    if len(f) < 8 or not f[0].isdigit():
        continue
    size, algbw, busbw = int(f[0]), float(f[6]), float(f[7])  # out-of-place columns
    mine = ours.get(size)
    theirs = busbw if n > 1 else algbw
    if mine is None or theirs <= 0:
        continue
    out.append((size, mine[col + "_gbps"] / theirs))
picks = [r for r in out if r[0] in (8, 65536, 1 << 20, 16 << 20, 256 << 20, 1 << 30)] or out[-4:]
print(f"{op} x{n} {col} ccbench/nccl-tests: " + "  ".join(f"{s}B {q:.3f}" for s, q in picks))
PY
)")
  }
  for op in ${timed_ops//\// }; do time_pair "$op" 0 "${timing_sizes[@]}"; done
  for op in ${registered_ops//\// }; do
    for reg in 1 2; do time_pair "$op" "$reg" "${registered_sizes[@]}"; done
  done
  echo
  echo "---- timing: ratio of ccbench to nccl-tests (1.0 = the same; below 1 = ccbench slower) ----"
  printf '%s\n' "${ratio_rows[@]}" | tee "$out/timing-ratios.txt"
  record "4 timing vs nccl-tests" ok "ratios in $out/timing-ratios.txt (printed above)"
else
  record "4 timing vs nccl-tests" skip "nccl-tests not built (step 1)"
fi

# --- 5. two or more GPUs -------------------------------------------------------------------------------
if [ "$gpus" -lt 2 ]; then
  record "5 multi-GPU checks" skip "1 GPU: NCCL's nRanks==1 path is a local copy (no peers, transports, -G teardown)"
elif [ ${#mpi_base[@]} -eq 0 ]; then
  record "5 multi-GPU checks" fail "no mpirun on this machine"
else
  np=$((gpus < 8 ? gpus : 8))
  run "5 x$np every op in/out-of-place" "$np" 180 --ops "$all_ops" -d float -o sum -b 1K -e 64M -f 8 -n 5 -c 1
  # sendrecv's KV-cache patterns (grouped ncclSend/ncclRecv, untested on a GPU before this step;
  # nccl-tests has no peer for them, so they are checked for data, not timed against it).
  even_np=$((np / 2 * 2))  # --peer-group 2 divides an even rank count
  for pattern in pairwise many-to-one one-to-many; do
    run "5 x$even_np sendrecv --pattern $pattern" "$even_np" 180 --ops sendrecv --pattern "$pattern" --peer-group 2 \
      --block-bytes 64K -d float -b 64K -e 64M -f 8 -n 3 -c 1 --in-place no
  done
  run "5 x$np bfloat16 avg" "$np" 180 --ops allreduce,reduce_scatter -d bfloat16 -o avg \
    -b 1K -e 4M -f 16 -n 3 -c 1
  run "5 x$np fp8_e5m2 max" "$np" 180 --ops allreduce,reduce_scatter -d fp8_e5m2 -o max -b 1K -e 4M -f 16 -n 3
  # -G on every rank: the end of the run finalizes communicators a graph captured. A hang there
  # (graphs destroyed after finalize) is caught by the wall limit, not by ccbench's own watchdog.
  run "5 x$np -G 4 teardown (watchdog -T 60)" "$np" 120 --ops allreduce,allgather,alltoall -d float -b 1K -e 16M \
    -f 16 -n 5 -G 4 -c 1
  # The matrix ops on real peers: an even matrix (16 MiB to every peer) is alltoall's traffic, so its
  # busbw is compared with alltoall's at S = np x 16 MiB (and nccl-tests' alltoall_perf, step 4's
  # build, by hand); then uneven routers, every block checked.
  : >"$out/matrix_even.csv"
  for ((i = 0; i < np; i++)); do
    printf '%s\n' "$(printf '16777216%.0s,' $(seq "$np") | sed 's/,$//')" >>"$out/matrix_even.csv"
  done
  run "5 x$np alltoallv even matrix" "$np" 180 --matrix "$out/matrix_even.csv" --ops alltoallv -d float -n 10 -c 1 \
    --in-place no
  run "5 x$np alltoall at the even matrix's S" "$np" 180 --ops alltoall -d float -b $((np * 16))M -e $((np * 16))M \
    -n 10 -c 1 --in-place no
  run "5 x$np moe hot expert" "$np" 180 --moe $((np * 4)),2,8192,4096,hot:0:0.5 -d bfloat16 -n 5 -c 1 --in-place no
  run "5 x$np moe zipf" "$np" 180 --moe $((np * 4)),4,8192,4096,zipf:1.2 -d bfloat16 -n 5 -c 1 --in-place no
  # replay's sends and receives between GPUs: a pair both ranks post send-first (1 MiB and 512 KiB).
  replay_run "5 x2 replay send/recv pair" 2 "$root/tests/data/replay/send_recv.trace.json"
  for spec in mod:2 div:2; do
    [ "$spec" = div:2 ] && [ "$np" -lt 4 ] && { record "5 groups div:2" skip "needs 4 GPUs"; continue; }
    run "5 x$np groups $spec" "$np" 180 --groups "$spec" --ops "$all_ops" -d float -b 1K -e 4M -f 16 -n 3 -c 1
  done
  # A killed rank, with -G graphs alive: the survivors must end (watchdog abort with the graphs
  # destroyed first, exit 3 or 4, the partial file kept) instead of hanging in ncclCommAbort.
  name="5 x$np killed rank under -G"
  t0=$(date +%s)
  launch "$np" timeout -k 5 150 "$ccbench" run --backend nccl -J "$out/killed.json" --progress never -T 20 \
    --ops allreduce -d float -b 64M -e 64M -n 100000 -G 2 -c 0 >"$out/killed.log" 2>&1 &
  kpid=$!
  victim=
  for _ in $(seq 1 60); do
    sleep 1
    # The last rank's ccbench itself (not mpirun or a timeout wrapper: their command lines start otherwise).
    victim=$(pgrep -f "^$ccbench run --backend nccl -J $out/killed.json" | sort -n | tail -1)
    [ -n "$victim" ] && grep -q "allreduce" "$out/killed.log" 2>/dev/null && break
  done
  [ -n "$victim" ] && kill -9 "$victim"
  wait "$kpid"
  rc=$?
  status=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('status'))" "$out/killed.json" 2>/dev/null)
  detail="killed pid ${victim:-none}, exit $rc, file status ${status:-none}, $(($(date +%s) - t0)) s"
  if [ -n "$victim" ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; then
    record "$name" ok "$detail"
  else
    record "$name" fail "$detail (124/137: the survivors hung)"
  fi
fi

# The metadata of one result file: NCCL version, communicator, fabric path and where it came from.
meta=$out/$(slug "4 timing ccbench allreduce x$np_time").json
[ -f "$meta" ] || meta=$out/$(slug "3 gpu1 float sum all ops").json
if [ -f "$meta" ]; then
  python3 - "$meta" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sw = d.get("software", {})
print("---- metadata ----")
for k in ("nccl", "nccl_build", "cuda_runtime", "cuda_driver", "nccl_communicator", "nccl_init_timeout_s",
          "fabric_path_from", "alltoall", "net_plugin"):
    print(f"{k:>24}: {sw.get(k)}")
print(f"{'fabric':>24}: {d.get('fabric')}")
PY
fi

[ "$failed" -eq 0 ]
