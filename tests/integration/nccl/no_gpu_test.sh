#!/bin/sh
# usage: no_gpu_test.sh CCBENCH MPIEXEC
# Without a GPU, --backend nccl must exit 2 with a message naming the cause, on every variant of
# the options that reaches the GPU check; bad NCCL options exit 2 before it. `ccbench info` must
# report the NCCL library's version.
set -u
ccbench=$1
mpiexec=${2:-mpirun}
fails=0

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "SKIP: a GPU is visible (the no-GPU path cannot be tested here)"
  exit 77
fi

mpi_flags="-np 1"
if "$mpiexec" --version 2>&1 | grep -q "Open MPI"; then
  mpi_flags="$mpi_flags --oversubscribe"
  [ "$(id -u)" = 0 ] && mpi_flags="$mpi_flags --allow-run-as-root"
fi

# expect CODE PATTERN ARGS...: run `ccbench run ARGS` under mpiexec, check exit code and stderr.
expect() {
  code=$1; pattern=$2; shift 2
  out=$("$mpiexec" $mpi_flags "$ccbench" run "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$code" ]; then
    echo "FAIL: ccbench run $* exited $rc, expected $code"; echo "$out"; fails=$((fails + 1)); return
  fi
  if ! printf '%s\n' "$out" | grep -q -- "$pattern"; then
    echo "FAIL: ccbench run $*: output lacks '$pattern'"; echo "$out"; fails=$((fails + 1)); return
  fi
  if printf '%s\n' "$out" | grep -qiE "segmentation|core dumped|terminate called|signal [0-9]"; then
    echo "FAIL: ccbench run $* crashed"; echo "$out"; fails=$((fails + 1)); return
  fi
  echo "ok: ccbench run $* -> $rc ($(printf '%s\n' "$out" | grep -- "$pattern" | head -1))"
}

expect 2 "--backend nccl: no CUDA device visible (cudaGetDeviceCount: " --backend nccl -b 1K -e 1K
expect 2 "no CUDA device visible" --backend nccl --path efa -d bfloat16 -o avg -b 1K -e 1M
expect 2 "no CUDA device visible" --backend nccl -G 4 --ops alltoall,broadcast -b 1K -e 1K
expect 2 "--path: expected nvlink, efa or all" --backend nccl --path infiniband -b 1K -e 1K
expect 2 "applies to --backend nccl only" --backend mpi --path efa -b 1K -e 1K
expect 2 "ccbench run: -R/--register applies to --backend nccl only" --backend mpi -R 1 -b 1K -e 1K
expect 2 "ccbench run: -R/--register applies to --backend nccl only" --backend mpi --register 2 -b 1K -e 1K
expect 2 "-R/--register: expected 0 (none), 1 (ncclCommRegister) or 2 (symmetric windows), got '3'" --backend nccl -R 3 -b 1K -e 1K

info=$("$ccbench" info 2>&1)
rc=$?
if [ "$rc" -ne 0 ] || ! printf '%s\n' "$info" | grep -qE '"nccl": *"[0-9]+\.[0-9]+\.[0-9]+"'; then
  echo "FAIL: ccbench info (exit $rc) does not report the NCCL version"; echo "$info"; fails=$((fails + 1))
else
  echo "ok: ccbench info reports $(printf '%s\n' "$info" | grep -oE '"nccl": *"[^"]*"' | head -1)"
fi

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all no-GPU checks passed"
