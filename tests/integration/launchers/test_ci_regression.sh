#!/usr/bin/env bash
# scripts/ci/regression.sh end to end on 2 local MPI ranks: a missing baseline exits 2; UPDATE_BASELINE=1
# stores one (2 launches); the next run (2 launches) is compared under the regression gate and the
# script exits with exactly the code `ccbench compare --gate regression` gives on the same two
# folders, leaving verdict and report.
# Usage: test_ci_regression.sh CCBENCH REGRESSION_SH
set -uo pipefail
ccbench=$(readlink -f "$1")
script=$(readlink -f "$2")
say() { echo "ci-regression-test: $*"; }
command -v mpirun >/dev/null || { say "SKIP: mpirun not found (Debian package openmpi-bin)"; exit 77; }
# `ccbench --help` lists the commands this build has (`run --help` would start MPI).
if ! "$ccbench" --help 2>&1 | grep -E '^ +run ' >/dev/null; then say "SKIP: $ccbench has no run command"; exit 77; fi
T=$(mktemp -d /tmp/ccbench-ci.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { say "FAILED: $*"; exit 1; }
export CCBENCH=$ccbench BASELINES_DIR=$T/baselines OUT_DIR=$T/out SWEEP="" NP=2 BASELINE_LAUNCHES=2 LAUNCHES=2
export OMPI_MCA_btl_vader_single_copy_mechanism=none
sweep=(-- --ops allreduce -b 1K -e 64K -f 4 -n 30 -w 2 --in-place no)

"$script" nightly "${sweep[@]}" >"$T/log0" 2>&1
rc=$?
if [[ $rc != 2 ]] || ! grep -q "no baseline 'nightly'" "$T/log0"; then
  fail "missing baseline: exit $rc, $(tail -3 "$T/log0")"
fi
say "missing baseline: exit 2 with a message"

UPDATE_BASELINE=1 "$script" nightly "${sweep[@]}" >"$T/log1" 2>&1 || fail "UPDATE_BASELINE=1: $(tail -5 "$T/log1")"
ls "$T"/baselines/nightly/*.json >/dev/null 2>&1 || fail "no baseline stored"
say "UPDATE_BASELINE=1 stored $(ls "$T"/baselines/nightly/)"

"$script" nightly "${sweep[@]}" >"$T/log2" 2>&1
rc=$?
tail -5 "$T/log2"
# The run's folder from its own last line: a run started in the same second as the one before it
# gets a suffix (nightly-STAMP-2), which a name pattern missed (CI, when the baseline run ended and
# this one began within one second).
verdict_file=$(sed -n 's/^regression\.sh: verdict \(.*-verdict\.json\), report .*/\1/p' "$T/log2" | tail -1)
result=${verdict_file%-verdict.json}/candidate
[[ -n $verdict_file && -d $result ]] || fail "no candidate launches named in the run's log ($(tail -1 "$T/log2"))"
"$ccbench" compare "$T/baselines/nightly" "$result" --gate regression --threshold 5% >/dev/null 2>&1
want=$?
[[ $want != 2 ]] || fail "compare itself exits 2 on these files"
[[ $rc == "$want" ]] || fail "regression.sh exited $rc, compare --gate exits $want"
ls "$T"/out/nightly-*-verdict.json "$T"/out/nightly-*.html >/dev/null || fail "no verdict or report left"
say "regression.sh exit $rc = compare's; verdict and report written"
say "PASS"
