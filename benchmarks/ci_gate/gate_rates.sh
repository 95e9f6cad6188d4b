#!/usr/bin/env bash
# The CI gate's false-alarm and miss rates, measured with the shipped scripts/ci/regression.sh.
#
#   benchmarks/ci_gate/gate_rates.sh PAIRS [OUT_DIR]
#
# Each of PAIRS pairs is two gate runs of a candidate against a "last good build" (a second copy of
# the binary). MODE=alternate (default): each run alternates the two builds launch by launch
# (--baseline-build), BASELINE_LAUNCHES + LAUNCHES launches (the script's defaults, 5 + 3).
# MODE=stored: the last good build's BASELINE_LAUNCHES launches are recorded once
# (UPDATE_BASELINE=1), then each run makes LAUNCHES candidate launches against that store, as a
# nightly job does. The two kinds of run:
#   A/A   the candidate is the same binary: exit 1 (regression) is a false alarm;
#   slow  the candidate is slower on one path (SLOWDOWN, below), in its own launches only: exit 1
#         is caught, anything else a miss.
# The two runs of a pair are back to back, in alternating order (A/A first in odd pairs), so a
# change of the machine's load falls on both kinds alike. Prints one line per run and the counts,
# with the node time (wall seconds) per gate run. Not a CI test: PAIRS=10 takes about 20 minutes
# with the default SWEEP=ci-small on 2 shared cores.
#
# Environment (optional): CCBENCH (default build/ccbench), SWEEP (default ci-small),
# THRESHOLD (regression.sh's, default 5%), BASELINE_LAUNCHES, LAUNCHES, NP (default 2),
# MODE (alternate or stored), SLOWDOWN (allreduce-linear or busy-core), BUSY_RANK (busy-core's
# rank, default 1).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  [[ ${1:-} == -h || ${1:-} == --help ]] && exit 0
  exit 2
fi
pairs=$1
if [[ ! $pairs =~ ^[0-9]{1,3}$ ]] || ((10#$pairs < 1)); then
  echo "gate_rates.sh: PAIRS must be a whole number 1..999, got '$pairs'" >&2
  exit 2
fi
pairs=$((10#$pairs))
work=${2:-$root/results/local/ci-gate-rates-$(date -u +%Y%m%dT%H%M%SZ)}
ccbench=$(readlink -f "${CCBENCH:-$root/build/ccbench}")
[[ -x $ccbench && -x $(dirname "$ccbench")/ccbench-measure ]] ||
  { echo "gate_rates.sh: no ccbench and ccbench-measure at $ccbench (build first, or set CCBENCH)" >&2; exit 2; }
BUSY_RANK=${BUSY_RANK:-1}
SLOWDOWN=${SLOWDOWN:-allreduce-linear}
MODE=${MODE:-alternate}
[[ $MODE == alternate || $MODE == stored ]] || { echo "gate_rates.sh: MODE must be alternate or stored, got '$MODE'" >&2; exit 2; }
[[ $BUSY_RANK =~ ^[0-9]{1,4}$ ]] || { echo "gate_rates.sh: BUSY_RANK must be a rank number, got '$BUSY_RANK'" >&2; exit 2; }
export SWEEP=${SWEEP-ci-small} NP=${NP:-2} OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
mkdir -p "$work/good" "$work/slow" "$work/repo/scripts/ci" "$work/repo/configs/sweeps" || exit 2
# The scripts run from a copy: bash reads a script as it runs, so editing the checkout during a
# measurement of 20 minutes would change the runs still to come.
cp "$root/scripts/ci/regression.sh" "$work/repo/scripts/ci/"
cp "$root/scripts/launches.sh" "$root/scripts/mpirun.sh" "$work/repo/scripts/"
[[ -z $SWEEP ]] || cp "$root/configs/sweeps/$SWEEP.yaml" "$work/repo/configs/sweeps/" || exit 2

# The last good build: a second copy of the binaries (ccbench execs the ccbench-measure beside it).
cp "$ccbench" "$(dirname "$ccbench")/ccbench-measure" "$work/good/"
# The slow candidate, SLOWDOWN=allreduce-linear (the default): the same binary, but its allreduce
# runs Open MPI's basic linear algorithm (reduce to rank 0, then broadcast) instead of the tuned
# default, as a build or configuration change of one collective would: on this machine 35-50%
# slower from 8 B to 2 KiB, about the same above 32 KiB, the other ops unchanged.
# SLOWDOWN=busy-core: rank BUSY_RANK shares its core with a busy loop for the whole launch (the
# loop and the rank are pinned with taskset to the first core of the rank's own affinity, the one
# mpirun bound it to); the loop ends by itself when the wrapper is gone (even after a SIGKILL) and
# after 600 s at most.
case $SLOWDOWN in
  allreduce-linear)
    cat >"$work/slow/ccbench" <<EOF
#!/usr/bin/env bash
export OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_allreduce_algorithm=1
exec "$ccbench" "\$@"
EOF
    ;;
  busy-core)
    cat >"$work/slow/ccbench" <<EOF
#!/usr/bin/env bash
rank=\${OMPI_COMM_WORLD_RANK:-\${PMIX_RANK:-0}}
[[ \$rank == $BUSY_RANK ]] || exec "$ccbench" "\$@"
core=\$(taskset -pc \$\$ | sed 's/.*: //; s/[,-].*//')
taskset -c "\$core" timeout 600 sh -c "while kill -0 \$\$ 2>/dev/null; do :; done" &
busy=\$!
trap 'kill \$busy 2>/dev/null' EXIT
taskset -c "\$core" "$ccbench" "\$@"
EOF
    ;;
  *) echo "gate_rates.sh: SLOWDOWN must be allreduce-linear or busy-core, got '$SLOWDOWN'" >&2; exit 2 ;;
esac
chmod +x "$work/slow/ccbench"

false_alarms=0 aa_inconclusive=0 aa_other=0 caught=0 missed=0 aa_runs=0 slow_runs=0 seconds_total=0
gate() {
  local kind=$1 candidate=$2 rc start=$SECONDS reference=(--baseline-build "$work/good/ccbench")
  [[ $MODE == alternate ]] || reference=()
  CCBENCH=$candidate OUT_DIR=$work/$kind BASELINES_DIR=$work/baselines timeout -k 10 1800 \
    "$work/repo/scripts/ci/regression.sh" "${reference[@]}" "ci-gate-$MODE" >"$work/$kind-$i.log" 2>&1
  rc=$?
  local took=$((SECONDS - start))
  seconds_total=$((seconds_total + took))
  if [[ $kind == aa ]]; then
    aa_runs=$((aa_runs + 1))
    case $rc in 0) ;; 1) false_alarms=$((false_alarms + 1)) ;; 4) aa_inconclusive=$((aa_inconclusive + 1)) ;; *) aa_other=$((aa_other + 1)) ;; esac
  else
    slow_runs=$((slow_runs + 1))
    if [[ $rc == 1 ]]; then caught=$((caught + 1)); else missed=$((missed + 1)); fi
  fi
  local geo
  geo=$(grep -m1 -oE 'geomean over [0-9]+ sizes: [0-9.]+x' "$work/$kind-$i.log" || true)
  printf 'pair %3d  %-4s exit %d  %4d s  %s\n' "$i" "$kind" "$rc" "$took" "$geo"
}
if [[ $MODE == stored ]]; then
  # The nightly case: one stored baseline of the last good build, recorded first, then every run
  # (A/A and slow alike) compares its own launches with it.
  echo "gate_rates.sh: recording the stored baseline (UPDATE_BASELINE=1, ${BASELINE_LAUNCHES:-5} launches)"
  CCBENCH=$work/good/ccbench OUT_DIR=$work/record BASELINES_DIR=$work/baselines UPDATE_BASELINE=1 \
    timeout -k 10 1800 "$work/repo/scripts/ci/regression.sh" "ci-gate-$MODE" >"$work/record.log" 2>&1 ||
    { tail -n 5 "$work/record.log" >&2; exit 1; }
fi
echo "gate_rates.sh: $pairs pairs, MODE=$MODE, SLOWDOWN=$SLOWDOWN, SWEEP=$SWEEP, ${BASELINE_LAUNCHES:-5} + ${LAUNCHES:-3} launches, THRESHOLD=${THRESHOLD:-5%}; logs in $work"
for ((i = 1; i <= pairs; i++)); do
  if ((i % 2)); then
    gate aa "$ccbench"
    gate slow "$work/slow/ccbench"
  else
    gate slow "$work/slow/ccbench"
    gate aa "$ccbench"
  fi
done
echo "A/A: $false_alarms false alarm(s) (exit 1) in $aa_runs runs; $aa_inconclusive inconclusive, $aa_other other exit"
echo "slow ($SLOWDOWN): caught (exit 1) in $caught of $slow_runs runs; missed $missed"
echo "node time: $((seconds_total / (aa_runs + slow_runs))) s a gate run on average (wall, $NP ranks)"
