#!/usr/bin/env bash
# Separate launches of one sweep into a folder that `ccbench compare` reads: the honest way to an
# interval. Samples inside one launch share its placement (nodes, cores, NIC queues, memory pages),
# so a launch's own "+-1%" is precision inside that launch; compare treats each launch as one trial
# and its intervals, gate and claim verdicts then include the launch-to-launch spread
# (docs/compare.md "Unit of analysis", docs/method.md).
#
#   scripts/launches.sh N OUT_DIR [-- ccbench run flags...]
#
# Writes OUT_DIR/launch-001.json ... launch-N.json (numbered so that name order is launch order:
# compare reads trials in that order to detect drift). An existing launch file is never
# overwritten: numbering continues after the last one, so running the script again adds launches.
# Then compare folders:  ccbench compare BASE_DIR OUT_DIR --gate regression
# To compare two builds or settings fairly, alternate them (A B A B ...), e.g. by calling this
# script with N=1 for each in turn, so that a drift of the machine cannot pose as a difference.
#
# Environment (optional): CCBENCH (default build/ccbench), LAUNCH (default "mpirun -np $NP"),
# NP (default 2), PAUSE_S seconds between launches (default 0).
# Exit: 0 all launches written; 2 usage; otherwise the failing launch's exit code.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ $# -lt 2 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  # --help is an answer (exit 0); a missing argument a usage error (exit 2).
  [[ ${1:-} == -h || ${1:-} == --help ]] && exit 0
  exit 2
fi
n=$1
out=$2
shift 2
[[ ${1:-} == -- ]] && shift
digits='^[0-9]+$'
if [[ ! $n =~ $digits ]] || ((10#$n < 1 || 10#$n > 999)); then
  echo "launches.sh: N must be a whole number from 1 to 999 (got '$n')" >&2
  exit 2
fi
n=$((10#$n))
NP=${NP:-2}
if [[ ! $NP =~ $digits ]] || ((10#$NP < 1)); then
  echo "launches.sh: NP must be a positive whole number (got '$NP')" >&2
  exit 2
fi
PAUSE_S=${PAUSE_S:-0}
if [[ ! $PAUSE_S =~ $digits ]]; then
  echo "launches.sh: PAUSE_S must be a whole number of seconds (got '$PAUSE_S')" >&2
  exit 2
fi
CCBENCH=${CCBENCH:-$root/build/ccbench}
if [[ ! -x $CCBENCH ]]; then
  echo "launches.sh: no ccbench at $CCBENCH (build first, or set CCBENCH)" >&2
  exit 2
fi
if [[ -z ${LAUNCH:-} ]]; then
  LAUNCH="mpirun -np $NP"
  [[ $(id -u) == 0 ]] && LAUNCH+=" --allow-run-as-root"
  ((10#$NP > $(nproc))) && LAUNCH+=" --oversubscribe"
fi
mkdir -p "$out" || exit 2
last=0
for f in "$out"/launch-[0-9][0-9][0-9].json; do
  [[ -e $f ]] || continue
  k=${f##*/launch-}
  k=$((10#${k%.json}))
  ((k > last)) && last=$k
done
if ((last + n > 999)); then
  echo "launches.sh: $out already holds launch-$(printf %03d $last).json; at most 999 launches a folder" >&2
  exit 2
fi
for ((i = last + 1; i <= last + n; i++)); do
  file=$out/launch-$(printf %03d "$i").json
  echo "launches.sh: launch $((i - last))/$n -> $file"
  # shellcheck disable=SC2086  # LAUNCH is a command line
  $LAUNCH "$CCBENCH" run -J "$file" --progress never "$@"
  rc=$?
  if [[ $rc != 0 ]]; then
    echo "launches.sh: launch $i failed (exit $rc)" >&2
    exit $rc
  fi
  ((i < last + n && PAUSE_S > 0)) && sleep "$PAUSE_S"
done
echo "launches.sh: $n launch(es) in $out; compare with: $CCBENCH compare BASE_DIR $out"
