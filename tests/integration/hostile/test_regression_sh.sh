#!/usr/bin/env bash
# scripts/ci/regression.sh from a checkout whose path holds a space (it exited 127: the default
# launcher was an unquoted string), and an empty NAME refused before any sweep (exit 2).
# Usage: test_regression_sh.sh CCBENCH SCRIPTS_DIR
set -uo pipefail
ccbench=$(readlink -f "$1")
scripts=$(readlink -f "$2")
command -v mpirun >/dev/null || { echo "SKIP: mpirun not found"; exit 77; }
T=$(mktemp -d /tmp/ccbench-ci-space.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "regression-sh-test: FAILED: $*"; exit 1; }
checkout="$T/a checkout"
mkdir -p "$checkout/scripts/ci"
cp "$scripts/ci/regression.sh" "$checkout/scripts/ci/"
cp "$scripts/mpirun.sh" "$checkout/scripts/"
export CCBENCH=$ccbench BASELINES_DIR="$T/base lines" OUT_DIR="$T/out dir" SWEEP="" NP=2
export OMPI_MCA_btl_vader_single_copy_mechanism=none

start=$SECONDS
out=$("$checkout/scripts/ci/regression.sh" "" -- --ops allreduce -b 1K -e 1K -n 3 2>&1)
rc=$?
[[ $rc == 2 ]] || fail "empty NAME: exit $rc: $out"
[[ $out == "regression.sh: NAME must be a non-empty name without '/' that does not start with '-', got ''" ]] ||
  fail "empty NAME said: $out"
[[ ! -e "$T/out dir" ]] || fail "empty NAME ran something: $(ls "$T/out dir")"
((SECONDS - start < 10)) || fail "empty NAME took $((SECONDS - start)) s"

UPDATE_BASELINE=1 "$checkout/scripts/ci/regression.sh" nightly -- --ops allreduce -b 1K -e 4K -n 3 -w 0 \
  --in-place no >"$T/log" 2>&1
rc=$?
[[ $rc == 0 ]] || fail "a checkout path with a space: exit $rc: $(tail -5 "$T/log")"
ls "$T/base lines/nightly/"*.json >/dev/null 2>&1 || fail "no baseline stored: $(tail -5 "$T/log")"
echo "regression-sh-test: PASS"
