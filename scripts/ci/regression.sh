#!/usr/bin/env bash
# CI on reserved instances: run the sweep, compare it with a reference result, exit with compare's code.
#
#   scripts/ci/regression.sh NAME [-- ccbench run flags...]
#
# NAME picks the reference: results/baselines/NAME (a folder of result files) or
# results/baselines/NAME.json. Exit codes are compare's (docs/verdict-format.md): 0 pass, 1 regression,
# 2 usage or parse error, 3 runs not comparable, 4 inconclusive; a failed run exits with run's code
# (1 data check failed, 2 usage, 3 hang, ...) before any comparison.
#
# Environment (all optional):
#   CCBENCH        the binary (default build/ccbench)
#   LAUNCH         how ranks start (default "mpirun -np $NP"; e.g. "srun --mpi=pmix --cpu-bind=none")
#   NP             ranks for the default LAUNCH (default 2)
#   SWEEP          a configs/sweeps/*.yaml name passed as --config (default quick; "" for none)
#   THRESHOLD      the regression gate's threshold (default 5%)
#   COMPARE_ARGS   more compare flags (e.g. "--ops allreduce --min-bytes 1M")
#   OUT_DIR        where the result, the verdict and the reports go (default results/local/ci)
#   BASELINES_DIR  where the references live (default results/baselines)
#   METRICS_DIR    also write NAME.prom there (node_exporter textfile collector directory)
#   UPDATE_BASELINE=1  store this run as the reference instead of comparing (exit 0)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  # --help is an answer (exit 0); a missing argument a usage error (exit 2).
  [[ ${1:-} == -h || ${1:-} == --help ]] && exit 0
  exit 2
fi
name=$1
shift
[[ ${1:-} == -- ]] && shift
# Checked before the sweep: NAME names files and the baseline folder.
if [[ -z $name || $name == */* || $name == -* ]]; then
  echo "regression.sh: NAME must be a non-empty name without '/' that does not start with '-', got '$name'" >&2
  exit 2
fi

CCBENCH=${CCBENCH:-$root/build/ccbench}
NP=${NP:-2}
SWEEP=${SWEEP-quick}
THRESHOLD=${THRESHOLD:-5%}
OUT_DIR=${OUT_DIR:-$root/results/local/ci}
baselines=${BASELINES_DIR:-$root/results/baselines}
if [[ ! -x $CCBENCH ]]; then
  echo "regression.sh: no ccbench at $CCBENCH (build first, or set CCBENCH)" >&2
  exit 2
fi
# Digits only before any arithmetic: [[ $NP -gt ... ]] would run a $(...) hidden in NP.
if [[ ! $NP =~ ^[0-9]{1,6}$ ]] || ((10#$NP < 1)); then
  echo "regression.sh: NP must be a positive whole number, got '$NP'" >&2
  exit 2
fi
NP=$((10#$NP))
# An array, so a checkout path with a space in it stays one word; a LAUNCH given in the
# environment is a command line split at spaces.
if [[ -z ${LAUNCH:-} ]]; then
  # The wrapper exits 143/130 when the job is stopped (plain mpirun says 1, "data check failed").
  launch=("$root/scripts/mpirun.sh" -np "$NP")
  [[ $(id -u) == 0 ]] && launch+=(--allow-run-as-root)
  [[ $NP -gt $(nproc) ]] && launch+=(--oversubscribe)
else
  read -r -a launch <<<"$LAUNCH"
fi

baseline=""
if [[ -d $baselines/$name ]]; then
  baseline=$baselines/$name
elif [[ -f $baselines/$name.json ]]; then
  baseline=$baselines/$name.json
elif [[ ${UPDATE_BASELINE:-0} != 1 ]]; then
  echo "regression.sh: no baseline '$name' (looked for $baselines/$name/ and $baselines/$name.json);" \
    "create one with UPDATE_BASELINE=1 $0 $name" >&2
  exit 2
fi

mkdir -p "$OUT_DIR" || exit 2
stamp=$(date -u +%Y%m%dT%H%M%SZ)
result=$OUT_DIR/$name-$stamp.json
config=()
[[ -n $SWEEP ]] && config=(--config "$root/configs/sweeps/$SWEEP.yaml")

echo "regression.sh: ${launch[*]} $CCBENCH run ${config[*]} --label ci-$name -J $result $*"
"${launch[@]}" "$CCBENCH" run "${config[@]}" --label "ci-$name" -J "$result" --progress never "$@"
rc=$?
if [[ $rc != 0 ]]; then
  echo "regression.sh: the run failed (exit $rc); no comparison" >&2
  exit $rc
fi

if [[ -n ${METRICS_DIR:-} ]]; then
  # Written beside, then renamed by ccbench (atomic), so the textfile collector never reads half a file.
  "$CCBENCH" report "$result" --format prometheus --out "$METRICS_DIR/ccbench-$name.prom" || true
fi

if [[ ${UPDATE_BASELINE:-0} == 1 ]]; then
  mkdir -p "$baselines/$name"
  cp "$result" "$baselines/$name/"
  echo "regression.sh: stored $result as a baseline in $baselines/$name/ (commit it)"
  exit 0
fi

verdict=$OUT_DIR/$name-$stamp-verdict.json
# shellcheck disable=SC2086  # COMPARE_ARGS is a list of flags
"$CCBENCH" compare "$baseline" "$result" --gate regression --threshold "$THRESHOLD" ${COMPARE_ARGS:-} \
  --format json --out "$verdict"
rc=$?
# shellcheck disable=SC2086
"$CCBENCH" compare "$baseline" "$result" --gate regression --threshold "$THRESHOLD" ${COMPARE_ARGS:-} \
  --format markdown --out "$OUT_DIR/$name-$stamp-verdict.md" >/dev/null 2>&1 || true
"$CCBENCH" report --baseline "$baseline" "$result" --format html --out "$OUT_DIR/$name-$stamp.html" || true
[[ -f $OUT_DIR/$name-$stamp-verdict.md ]] && cat "$OUT_DIR/$name-$stamp-verdict.md"
echo "regression.sh: verdict $verdict, report $OUT_DIR/$name-$stamp.html, exit $rc"
exit $rc
