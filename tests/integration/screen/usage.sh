#!/bin/bash
# Exact messages and exit codes of `ccbench screen` for bad input and for a screen that cannot run.
set -uo pipefail
ccbench=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
# expect CODE MESSAGE -- ARGS...: exit code and the whole stderr (one line).
expect() {
  local code=$1 message=$2
  shift 3
  local err rc=0
  err=$("$@" 2>&1 >/dev/null) || rc=$?
  if [[ $rc -ne $code || $err != "$message" ]]; then
    echo "FAIL: $* -> exit $rc, stderr '$err'; expected exit $code, '$message'"
    failures=$((failures + 1))
  else
    echo "ok: exit $code: $message"
  fi
}
printf 'node1 slots=8\n# spare\nnode2 slots=eight\n' >"$work/hosts"
mkdir "$work/exists"
expect 2 "ccbench screen: --hosts: host 'a' is listed twice" -- "$ccbench" screen --hosts a,b,a --out "$work/o"
expect 2 "ccbench screen: $work/hosts:3: 'slots=eight' is not slots=N or max_slots=N (N >= 1)" -- \
  "$ccbench" screen --hostfile "$work/hosts" --out "$work/o"
expect 2 "ccbench screen: SLURM_JOB_NODELIST: 'gpu[3-1]': '3-1' is not N or N-M with N <= M" -- \
  env SLURM_JOB_NODELIST='gpu[3-1]' "$ccbench" screen --out "$work/o"
expect 2 "ccbench screen: no hosts: give --hosts or --hostfile, or run inside a Slurm allocation (SLURM_JOB_NODELIST)" -- \
  env -u SLURM_JOB_NODELIST "$ccbench" screen --out "$work/o"
expect 2 "ccbench screen: --out $work/exists: exists; choose a new folder" -- "$ccbench" screen --hosts a,b --out "$work/exists"
expect 2 "ccbench screen: -b/--small-bytes 4M and -e/--large-bytes 8: need 0 < small < large" -- \
  "$ccbench" screen --hosts a,b -b 4M -e 8 --out "$work/o"
expect 2 "ccbench screen: --path: only with --backend nccl" -- "$ccbench" screen --hosts a,b --path efa --out "$work/o"
expect 3 "ccbench screen: cannot run: the launcher 'mpirun' is not on PATH" -- \
  env PATH=/nonexistent "$ccbench" screen --hosts a,b --out "$work/o"
[[ ! -e $work/o ]] || { echo "FAIL: a usage error created --out"; failures=$((failures + 1)); }
exit "$failures"
