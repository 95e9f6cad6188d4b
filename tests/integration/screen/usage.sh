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
expect 2 "ccbench screen: --path applies to --backend nccl only" -- "$ccbench" screen --hosts a,b --path efa --out "$work/o"
expect 2 "ccbench screen: --unjudged: healthy not in {exclude,include}" -- \
  "$ccbench" screen --hosts a,b --unjudged healthy --out "$work/o"
expect 2 "ccbench screen: --launcher mpirun: 'mpirun' is not on PATH" -- \
  env PATH=/nonexistent "$ccbench" screen --hosts a,b --out "$work/o"
# The launch layer's bad input (issue 22): a hostlist that does not parse, srun missing, an
# allocation with fewer CPUs on a node than --ranks-per-host asks for. Each before any test runs.
expect 2 "ccbench screen: --hosts: 'ccb-h[0-': unbalanced '['" -- "$ccbench" screen --hosts 'ccb-h[0-' --out "$work/o"
expect 2 "ccbench screen: SLURM_JOB_NODELIST: 'ccb-h[0-': unbalanced '['" -- \
  env SLURM_JOB_NODELIST='ccb-h[0-' "$ccbench" screen --out "$work/o"
expect 2 "ccbench screen: --hosts: host 'ccb-h2' is listed twice" -- \
  "$ccbench" screen --hosts 'ccb-h[0-3,5],ccb-h2' --out "$work/o"
expect 2 "ccbench screen: --launcher srun: 'srun' is not on PATH" -- \
  env PATH=/nonexistent "$ccbench" screen --launcher srun --hosts 'ccb-h[0-3,5]' --out "$work/o"
mkdir "$work/slurm"
printf '#!/bin/sh\necho "srun: must not be started" >&2\nexit 1\n' >"$work/slurm/srun"
chmod +x "$work/slurm/srun"
expect 2 "ccbench screen: --ranks-per-host 4: the allocation has 2 CPUs on ccb-h0 (SLURM_JOB_CPUS_PER_NODE=2(x5)); srun cannot start 4 ranks there (allocate more, or pass --overcommit to srun)" -- \
  env PATH="$work/slurm:$PATH" SLURM_JOB_NODELIST='ccb-h[0-4]' SLURM_JOB_CPUS_PER_NODE='2(x5)' \
  "$ccbench" screen --launcher srun --ranks-per-host 4 --out "$work/o"
expect 2 "ccbench screen: --ranks-per-host 2: the allocation has 1 CPU on ccb-h3 (SLURM_JOB_CPUS_PER_NODE=4(x3),1,4); srun cannot start 2 ranks there (allocate more, or pass --overcommit to srun)" -- \
  env PATH="$work/slurm:$PATH" SLURM_JOB_NODELIST='ccb-h[0-4]' SLURM_JOB_CPUS_PER_NODE='4(x3),1,4' \
  "$ccbench" screen --launcher srun --hosts 'ccb-h[2-4]' --ranks-per-host 2 --out "$work/o"
expect 2 "ccbench screen: SLURM_JOB_CPUS_PER_NODE: '2(x' is not N or N(xM) with N, M >= 1" -- \
  env PATH="$work/slurm:$PATH" SLURM_JOB_NODELIST='ccb-h[0-4]' SLURM_JOB_CPUS_PER_NODE='2(x' \
  "$ccbench" screen --launcher srun --out "$work/o"
# Hostile input (each failed before its fix: every host blamed, a silent "all healthy", a hang, a
# result lost after the whole screen).
expect 2 "ccbench screen: -b/--small-bytes 1: allreduce of float over 1 ranks carries 0 bytes, not 1: give a multiple of 4 bytes" -- \
  "$ccbench" screen --hosts a,b -b 1 --out "$work/o"
expect 2 "ccbench screen: -b/--small-bytes 9: allreduce of float over 1 ranks carries 8 bytes, not 9: give a multiple of 4 bytes" -- \
  "$ccbench" screen --hosts a,b -b 9 --out "$work/o"
expect 2 "ccbench screen: -b/--small-bytes 8: allgather of float over 2 ranks carries 0 bytes, not 8: give a multiple of 64 bytes" -- \
  "$ccbench" screen --hosts a,b --op allgather --ranks-per-host 2 -b 8 --out "$work/o"
expect 2 "ccbench screen: -e/--large-bytes 262145: allreduce of float over 1 ranks carries 262144 bytes, not 262145: give a multiple of 4 bytes" -- \
  "$ccbench" screen --hosts a,b -e 262145 --out "$work/o"
for flag in --tolerance --latency-tolerance --alpha --expect-busbw --expect-latency-us -T --test-timeout --max-time-per-size; do
  long=$flag
  [[ $flag == -T ]] && long=-T/--timeout  # run's flag, in run's words
  expect 2 "ccbench screen: $long: 'nan' is not a finite number" -- "$ccbench" screen --hosts a,b "$flag" nan --out "$work/o"
done
expect 2 "ccbench screen: --healthy-out and --exclude-out: both are $work/x; give two files" -- \
  "$ccbench" screen --hosts a,b --healthy-out "$work/x" --exclude-out "$work/./x" --out "$work/o"
expect 2 "ccbench screen: --healthy-out /nonexistent/dir/h.txt: folder /nonexistent does not exist (missing folders are created, but not directly under /)" -- \
  "$ccbench" screen --hosts a,b --healthy-out /nonexistent/dir/h.txt --out "$work/o"
expect 2 "ccbench screen: -n/--iters: '0' is not a positive count or 'auto'" -- "$ccbench" screen --hosts a,b -n 0 --out "$work/o"
mkfifo "$work/fifo"
expect 2 "ccbench screen: --hostfile $work/fifo: is a FIFO (named pipe), not a regular file" -- \
  timeout 10 "$ccbench" screen --hostfile "$work/fifo" --out "$work/o"
expect 2 "ccbench screen: SLURM_JOB_NODELIST: 'm[0-9]': more than 100000 hosts" -- \
  timeout 10 env SLURM_JOB_NODELIST='n[0-99999],m[0-9]' "$ccbench" screen --out "$work/o"
# --help states the defaults every screen.json records (one source: Criteria).
help=$("$ccbench" screen --help)
for want in "fleet's latency (1)" "fleet's busbw (0.2)" "hosts and metrics (0.05)" "gets at most (4)"; do
  [[ $help == *"$want"* ]] || { echo "FAIL: --help lacks '$want'"; failures=$((failures + 1)); }
done
[[ ! -e $work/o ]] || { echo "FAIL: a usage error created --out"; failures=$((failures + 1)); }
# 120-character host names: test files named by host index (a launcher that fails at once stands in
# for one that cannot reach them); every test's log exists, so the screen names the launcher's error.
mkdir "$work/bin"
printf '#!/bin/sh\necho "mpirun: cannot start" >&2\nexit 1\n' >"$work/bin/mpirun"
chmod +x "$work/bin/mpirun"
long=$(printf 'h%.0s' $(seq 120))
rc=0
err=$(PATH="$work/bin:$PATH" "$ccbench" screen --hosts "${long}1,${long}2,${long}3" --out "$work/long" 2>&1) || rc=$?
if [[ $rc -ne 3 || ! -f $work/long/tests/000-solo-host0.log || $err == *"could not start the launcher"* ]]; then
  echo "FAIL: 120-character host names: exit $rc, $(ls "$work/long/tests" 2>&1 | head -3 | tr '\n' ' ')"
  failures=$((failures + 1))
else
  echo "ok: 120-character host names: test files by host index, exit 3"
fi
exit "$failures"
