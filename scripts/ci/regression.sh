#!/usr/bin/env bash
# CI on reserved instances: separate launches of the sweep, compared with a reference under a
# regression gate; exits with compare's code.
#
#   scripts/ci/regression.sh [--baseline-build PATH] NAME [-- ccbench run flags...]
#
# The unit is a launch (docs/compare.md "Unit of analysis"): every launch is its own mpirun with
# one trial, written by scripts/launches.sh. Trials inside one launch share its placement and its
# moment, so `--trials N` (N > 1) in the run flags is refused (exit 2): set LAUNCHES instead.
#
# Two ways to get the reference:
#   stored     results/baselines/NAME/ (a folder of launch files; NAME.json, one launch, also
#              works): record it with UPDATE_BASELINE=1, which runs BASELINE_LAUNCHES launches
#              and replaces the folder's result files with them (commit them). A run then makes
#              LAUNCHES launches of CCBENCH and compares the folders. A machine that changed
#              since the baseline was recorded shifts every candidate launch alike, which the gate
#              cannot tell from a regression: prefer --baseline-build where both builds can run.
#   --baseline-build PATH   the last good build's ccbench, run now on the same allocation:
#              BASELINE_LAUNCHES launches of PATH and LAUNCHES of CCBENCH, alternated launch by
#              launch and spread evenly (B C B B C B C B for 5 and 3), so a load or drift of the
#              machine falls on both sides alike. Nothing is read from or written to the store.
#
# Exit codes are compare's (docs/verdict-format.md): 0 pass, 1 regression, 2 usage or parse error,
# 3 runs not comparable, 4 inconclusive; a failed launch exits with run's code (1 data check
# failed, 2 usage, 3 hang, ...) before any comparison, and leaves the store as it was.
#
# Environment (all optional):
#   CCBENCH            the candidate binary (default build/ccbench)
#   LAUNCHES           candidate launches a run (default 3; 1..100)
#   BASELINE_LAUNCHES  baseline launches: recorded by UPDATE_BASELINE=1, or run beside the
#                      candidate's with --baseline-build (default 5; 2..100)
#   LAUNCH             how ranks start (default "scripts/mpirun.sh -np $NP"; e.g.
#                      "srun --mpi=pmix --cpu-bind=none"); a command line split at spaces
#   NP                 ranks for the default LAUNCH (default 2)
#   SWEEP              a configs/sweeps/*.yaml name passed as --config (default quick; "" for none)
#   THRESHOLD          the regression gate's threshold (default 5%)
#   COMPARE_ARGS       more compare flags (e.g. "--ops allreduce --min-bytes 1M")
#   OUT_DIR            where the launches, the verdict and the reports go (default results/local/ci):
#                      NAME-STAMP/{baseline,candidate}/launch-NNN.json, NAME-STAMP-verdict.json
#                      and .md, NAME-STAMP.html
#   BASELINES_DIR      where the stored references live (default results/baselines)
#   METRICS_DIR        also write ccbench-NAME.prom there from the last candidate launch
#                      (node_exporter textfile collector directory)
#   UPDATE_BASELINE=1  record BASELINE_LAUNCHES launches as NAME's stored reference (exit 0)
#   ROLLING=N          nightly rolling baseline: after a pass (exit 0 only), add this run's
#                      candidate launches to results/baselines/NAME/ and keep its newest N
#                      launch-*.json files (N >= 2; other files there are kept). A run that
#                      failed, regressed or was inconclusive leaves the store untouched.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
help() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
usage_error() {
  echo "regression.sh: $*" >&2
  exit 2
}

baseline_build=""
name=""
have_name=0
run_flags=()
while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) help; exit 0 ;;
    --baseline-build)
      [[ $# -ge 2 ]] || usage_error "--baseline-build needs the path of the last good build's ccbench"
      baseline_build=$2
      shift 2
      ;;
    --baseline-build=*) baseline_build=${1#--baseline-build=}; shift ;;
    --) shift; run_flags=("$@"); break ;;
    *)
      # A word starting with '-' is NAME's error below when no NAME came yet (the old contract).
      if ((have_name)); then
        usage_error "unexpected argument '$1' after NAME '$name' (ccbench run flags go after --)"
      fi
      name=$1
      have_name=1
      shift
      ;;
  esac
done
if ((!have_name)); then
  help >&2
  exit 2
fi
# Checked before any launch: NAME names files and the baseline folder.
if [[ -z $name || $name == */* || $name == -* ]]; then
  usage_error "NAME must be a non-empty name without '/' that does not start with '-', got '$name'"
fi

# A whole number in [lo, hi], checked as digits before any arithmetic sees it ($((...)) would run a
# $(...) hidden in the value).
whole_number() {
  local var=$1 value=$2 lo=$3 hi=$4 why=$5
  if [[ ! $value =~ ^[0-9]{1,6}$ ]] || ((10#$value < lo || 10#$value > hi)); then
    usage_error "$var must be a whole number from $lo to $hi ($why), got '$value'"
  fi
}
LAUNCHES=${LAUNCHES:-3}
BASELINE_LAUNCHES=${BASELINE_LAUNCHES:-5}
NP=${NP:-2}
ROLLING=${ROLLING:-0}
whole_number LAUNCHES "$LAUNCHES" 1 100 "candidate launches a run"
whole_number BASELINE_LAUNCHES "$BASELINE_LAUNCHES" 2 100 \
  "baseline launches; one launch cannot show the launch-to-launch spread"
if [[ ! $NP =~ ^[0-9]{1,6}$ ]] || ((10#$NP < 1)); then
  usage_error "NP must be a positive whole number, got '$NP'"
fi
if [[ $ROLLING != 0 ]]; then
  whole_number ROLLING "$ROLLING" 2 999 "launch files kept in the rolling baseline; 0 for off"
fi
LAUNCHES=$((10#$LAUNCHES)) BASELINE_LAUNCHES=$((10#$BASELINE_LAUNCHES)) NP=$((10#$NP)) ROLLING=$((10#$ROLLING))
update=${UPDATE_BASELINE:-0}
[[ $update == 0 || $update == 1 ]] || usage_error "UPDATE_BASELINE must be 0 or 1, got '$update'"

# The gate's unit is a launch: trials inside one launch would pass for launches in compare. -J is
# the script's own (one file per launch).
for ((i = 0; i < ${#run_flags[@]}; i++)); do
  flag=${run_flags[i]}
  case $flag in
    --trials | --trials=*)
      if [[ $flag == --trials ]]; then value=${run_flags[i + 1]:-}; else value=${flag#--trials=}; fi
      if [[ $value != 1 ]]; then
        usage_error "--trials${value:+ $value}: trials inside one launch share its placement and its moment, so the" \
          "gate counts launches, not trials; set LAUNCHES (candidate) and BASELINE_LAUNCHES instead"
      fi
      ;;
    -J | --json | --json=* | -J?*)
      usage_error "$flag: the launches' files are the script's own (OUT_DIR/NAME-STAMP/); set OUT_DIR instead"
      ;;
  esac
done

CCBENCH=${CCBENCH:-$root/build/ccbench}
SWEEP=${SWEEP-quick}
THRESHOLD=${THRESHOLD:-5%}
OUT_DIR=${OUT_DIR:-$root/results/local/ci}
baselines=${BASELINES_DIR:-$root/results/baselines}
[[ -x $CCBENCH ]] || usage_error "no ccbench at $CCBENCH (build first, or set CCBENCH)"
if [[ -n $baseline_build ]]; then
  [[ -f $baseline_build && -x $baseline_build ]] ||
    usage_error "--baseline-build $baseline_build: not an executable file (the last good build's ccbench)"
  ((update == 0)) || usage_error "UPDATE_BASELINE=1 records a stored baseline; with --baseline-build nothing is stored"
  ((ROLLING == 0)) || usage_error "ROLLING=$ROLLING keeps a stored baseline; with --baseline-build nothing is stored"
fi
config=()
if [[ -n $SWEEP ]]; then
  [[ -f $root/configs/sweeps/$SWEEP.yaml ]] || usage_error "SWEEP=$SWEEP: no $root/configs/sweeps/$SWEEP.yaml"
  config=(--config "$root/configs/sweeps/$SWEEP.yaml")
fi
# A file holds more than one trial when a row has trial >= 1 (ccbench writes "trial": N per row).
launch_trials_ok() { ! grep -Eq '"trial": *[1-9]' "$1"; }

baseline=""
if [[ -z $baseline_build && $update == 0 ]]; then
  if [[ -d $baselines/$name ]]; then
    baseline=$baselines/$name
  elif [[ -f $baselines/$name.json ]]; then
    baseline=$baselines/$name.json
  else
    usage_error "no baseline '$name' (looked for $baselines/$name/ and $baselines/$name.json);" \
      "record one with UPDATE_BASELINE=1 $0 $name, or run the last good build beside this one with --baseline-build PATH"
  fi
  stored=()
  if [[ -d $baseline ]]; then
    for f in "$baseline"/*.json; do [[ -f $f ]] && stored+=("$f"); done
  else
    stored=("$baseline")
  fi
  ((${#stored[@]} > 0)) || usage_error "baseline folder $baseline holds no result files (*.json)"
  [[ $ROLLING == 0 || -d $baseline ]] ||
    usage_error "ROLLING=$ROLLING adds launches to a baseline folder; $baseline is one file (record a folder with UPDATE_BASELINE=1)"
  for f in "${stored[@]}"; do
    launch_trials_ok "$f" || usage_error "baseline $f holds several trials of one launch, which compare would count" \
      "as launches; record the baseline again with UPDATE_BASELINE=1 (one trial a launch)"
  done
fi

if [[ -z ${LAUNCH:-} ]]; then
  # The wrapper exits 143/130 when the job is stopped (plain mpirun says 1, "data check failed").
  # launches.sh splits LAUNCH at spaces, so a checkout path holding one gets plain mpirun.
  if [[ $root == *[[:space:]]* ]]; then launch="mpirun -np $NP"; else launch="$root/scripts/mpirun.sh -np $NP"; fi
  [[ $(id -u) == 0 ]] && launch+=" --allow-run-as-root"
  ((NP > $(nproc))) && launch+=" --oversubscribe"
else
  launch=$LAUNCH
fi

mkdir -p "$OUT_DIR" || exit 2
# A run folder of its own (mkdir fails if it exists): two runs started in one second never share one.
stamp=$(date -u +%Y%m%dT%H%M%SZ)
run_dir=""
for suffix in "" -{2..99}; do
  if mkdir "$OUT_DIR/$name-$stamp$suffix" 2>/dev/null; then
    stamp+=$suffix
    run_dir=$OUT_DIR/$name-$stamp
    break
  fi
done
[[ -n $run_dir ]] || usage_error "cannot make a run folder $OUT_DIR/$name-$stamp"
started_s=$SECONDS
launches_run=0
# One or more launches of BINARY into DIR (numbered on from what DIR holds), as launches.sh makes
# them; a failed launch ends the script with its code.
launch_into() {
  local dir=$1 binary=$2 count=$3 label=$4 rc
  CCBENCH=$binary LAUNCH=$launch "$root/scripts/launches.sh" "$count" "$dir" -- "${config[@]}" \
    --label "$label" --trials 1 "${run_flags[@]}"
  rc=$?
  if [[ $rc != 0 ]]; then
    echo "regression.sh: a launch failed (exit $rc); no comparison, the stored baseline is as it was" >&2
    exit "$rc"
  fi
  launches_run=$((launches_run + count))
}
# Launch files of a folder in name order (= launch order).
launch_files() { for f in "$1"/launch-*.json; do [[ -f $f ]] && echo "$f"; done; }

echo "regression.sh: $launch $CCBENCH run ${config[*]} --label ci-$name --trials 1 ${run_flags[*]}"
if ((update)); then
  launch_into "$run_dir/baseline" "$CCBENCH" "$BASELINE_LAUNCHES" "ci-$name"
  mkdir -p "$baselines/$name" || exit 2
  # Only now, with every launch written, is the old reference replaced.
  old=0
  for f in "$baselines/$name"/*.json "$baselines/$name"/*.jsonl; do
    [[ -f $f ]] || continue
    rm -f "$f" && old=$((old + 1))
  done
  while read -r f; do
    cp "$f" "$baselines/$name/launch-$stamp-${f##*/launch-}" || exit 2
  done < <(launch_files "$run_dir/baseline")
  echo "regression.sh: stored $BASELINE_LAUNCHES launches in $baselines/$name/ (replacing $old result files;" \
    "$((SECONDS - started_s)) s); commit them"
  exit 0
fi

if [[ -n $baseline_build ]]; then
  # Spread evenly: next is the side whose share of its launches done is behind.
  done_b=0 done_c=0
  while ((done_b < BASELINE_LAUNCHES || done_c < LAUNCHES)); do
    if ((done_c >= LAUNCHES || (done_b < BASELINE_LAUNCHES &&
      (2 * done_b + 1) * LAUNCHES <= (2 * done_c + 1) * BASELINE_LAUNCHES))); then
      echo "regression.sh: baseline build, launch $((done_b + 1))/$BASELINE_LAUNCHES"
      launch_into "$run_dir/baseline" "$baseline_build" 1 "ci-$name baseline-build"
      done_b=$((done_b + 1))
    else
      echo "regression.sh: candidate, launch $((done_c + 1))/$LAUNCHES"
      launch_into "$run_dir/candidate" "$CCBENCH" 1 "ci-$name"
      done_c=$((done_c + 1))
    fi
  done
  baseline=$run_dir/baseline
else
  launch_into "$run_dir/candidate" "$CCBENCH" "$LAUNCHES" "ci-$name"
fi
candidate=$run_dir/candidate
echo "regression.sh: $launches_run launches in $((SECONDS - started_s)) s"

if [[ -n ${METRICS_DIR:-} ]]; then
  # Written beside, then renamed by ccbench (atomic), so the textfile collector never reads half a file.
  "$CCBENCH" report "$(launch_files "$candidate" | tail -n 1)" --format prometheus \
    --out "$METRICS_DIR/ccbench-$name.prom" || true
fi

verdict=$OUT_DIR/$name-$stamp-verdict.json
# shellcheck disable=SC2086  # COMPARE_ARGS is a list of flags
"$CCBENCH" compare "$baseline" "$candidate" --gate regression --threshold "$THRESHOLD" ${COMPARE_ARGS:-} \
  --format json --out "$verdict"
rc=$?
# shellcheck disable=SC2086
"$CCBENCH" compare "$baseline" "$candidate" --gate regression --threshold "$THRESHOLD" ${COMPARE_ARGS:-} \
  --format markdown --out "$OUT_DIR/$name-$stamp-verdict.md" >/dev/null 2>&1 || true
"$CCBENCH" report --baseline "$baseline" "$candidate" --format html --out "$OUT_DIR/$name-$stamp.html" || true
[[ -f $OUT_DIR/$name-$stamp-verdict.md ]] && cat "$OUT_DIR/$name-$stamp-verdict.md"

if ((ROLLING > 0 && rc == 0)); then
  while read -r f; do
    cp "$f" "$baselines/$name/launch-$stamp-${f##*/launch-}" || exit 2
  done < <(launch_files "$candidate")
  mapfile -t kept < <(launch_files "$baselines/$name")
  dropped=0
  for ((i = 0; i + ROLLING < ${#kept[@]}; i++)); do
    rm -f "${kept[i]}" && dropped=$((dropped + 1))
  done
  echo "regression.sh: passed; added $LAUNCHES launches to the rolling baseline $baselines/$name/," \
    "dropped the $dropped oldest (keeps $ROLLING)"
elif ((ROLLING > 0)); then
  echo "regression.sh: exit $rc is not a pass; the rolling baseline $baselines/$name/ is unchanged"
fi
echo "regression.sh: verdict $verdict, report $OUT_DIR/$name-$stamp.html, exit $rc"
exit $rc
