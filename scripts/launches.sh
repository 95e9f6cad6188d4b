#!/usr/bin/env bash
# Separate launches of one sweep into a folder that `ccbench compare` reads: the honest way to an
# interval. Samples inside one launch share its placement (nodes, cores, NIC queues, memory pages),
# so a launch's own "+-1%" is precision inside that launch; compare treats each launch as one trial
# and its intervals, gate and claim verdicts then include the launch-to-launch spread
# (docs/compare.md "Unit of analysis", docs/method.md).
#
#   scripts/launches.sh N OUT_DIR [-- ccbench run flags...]
#   scripts/launches.sh --until-decided BASE_DIR CAND_DIR --compare "COMPARE FLAGS" [--max-launches 20]
#                       [--min-launches 5] [--base-flags "RUN FLAGS"] [--cand-flags "RUN FLAGS"]
#                       [-- ccbench run flags for both sides...]
#
# Writes OUT_DIR/launch-001.json ... launch-N.json (numbered so that name order is launch order:
# compare reads trials in that order to detect drift). An existing launch file is never
# overwritten: numbering continues after the last one, so running the script again adds launches.
# Then compare folders:  ccbench compare BASE_DIR OUT_DIR --gate regression
# To compare two builds or settings fairly, alternate them (A B A B ...), e.g. by calling this
# script with N=1 for each in turn, so that a drift of the machine cannot pose as a difference.
#
# --until-decided runs the loop a team runs by hand: launches alternate between the sides (BASE,
# CAND, BASE, CAND, ...; each side's own flags from --base-flags / --cand-flags, word-split, after
# the common ones); once both folders hold --min-launches launches, `ccbench compare BASE_DIR CAND_DIR
# COMPARE FLAGS` (word-split) runs after every pair, and the loop stops at the first decided verdict
# (confirmed, refuted, pass, regression, not comparable) or when both sides hold --max-launches.
# compare's default --looks sequential keeps its verdicts valid when asked after every pair
# (docs/compare.md "Asking again"), so `--looks once` is refused here. Launches already in the
# folders count and are kept. CCBENCH_BASE / CCBENCH_CAND (default CCBENCH) compare two builds.
#
# Environment (optional): CCBENCH (default build/ccbench), LAUNCH (default "mpirun -np $NP"),
# NP (default 2), PAUSE_S seconds between launches (default 0).
# Exit: 0 all launches written; 2 usage; otherwise the failing launch's exit code. --until-decided:
# the last compare's exit code (0 confirmed/pass, 1 refuted/regression, 3 not comparable, 4 still
# inconclusive at --max-launches), 2 usage, or a failing launch's exit code.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
until_decided=0
if [[ ${1:-} == --until-decided ]]; then
  until_decided=1
  shift
fi
if [[ $# -lt 2 || $1 == -h || $1 == --help ]]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  # --help is an answer (exit 0); a missing argument a usage error (exit 2).
  [[ ${1:-} == -h || ${1:-} == --help ]] && exit 0
  exit 2
fi
digits='^[0-9]+$'
if ((until_decided)); then
  base_dir=$1
  cand_dir=$2
  shift 2
  compare_flags='' compare_given=0 max_launches=20 min_launches=5 base_flags='' cand_flags=''
  while [[ $# -gt 0 && $1 != -- ]]; do
    if [[ $# -lt 2 ]]; then
      echo "launches.sh: $1 needs a value" >&2
      exit 2
    fi
    case $1 in
      --compare) compare_flags=$2 compare_given=1 ;;
      --max-launches) max_launches=$2 ;;
      --min-launches) min_launches=$2 ;;
      --base-flags) base_flags=$2 ;;
      --cand-flags) cand_flags=$2 ;;
      *)
        echo "launches.sh: unknown option '$1' for --until-decided (--compare, --max-launches, --min-launches, --base-flags, --cand-flags)" >&2
        exit 2
        ;;
    esac
    shift 2
  done
  [[ ${1:-} == -- ]] && shift
  for flag in max_launches min_launches; do
    value=${!flag}
    if [[ ! $value =~ $digits ]] || ((10#$value < 2 || 10#$value > 999)); then
      echo "launches.sh: --${flag/_/-} must be a whole number from 2 to 999 (got '$value')" >&2
      exit 2
    fi
  done
  max_launches=$((10#$max_launches)) min_launches=$((10#$min_launches))
  if ((min_launches > max_launches)); then
    echo "launches.sh: --min-launches ($min_launches) is larger than --max-launches ($max_launches)" >&2
    exit 2
  fi
  # shellcheck disable=SC2206  # COMPARE FLAGS are word-split on purpose
  compare_args=($compare_flags)
  verdict_flag=0
  for ((k = 0; k < ${#compare_args[@]}; k++)); do
    case ${compare_args[k]} in
      --claim | --claim=* | --expect-speedup | --expect-speedup=* | --gate | --gate=*) verdict_flag=1 ;;
    esac
    if [[ ${compare_args[k]} == --looks=once || (${compare_args[k]} == --looks && ${compare_args[k + 1]:-} == once) ]]; then
      echo "launches.sh: --compare: --looks once is for a launch count fixed in advance; --until-decided asks after every pair and needs compare's --looks sequential (the default)" >&2
      exit 2
    fi
  done
  if ((!compare_given || !verdict_flag)); then
    echo "launches.sh: --until-decided needs --compare with a claim or a gate to wait for (--claim FILE, --expect-speedup X or --gate regression)" >&2
    exit 2
  fi
else
  n=$1
  out=$2
  shift 2
  [[ ${1:-} == -- ]] && shift
  if [[ ! $n =~ $digits ]] || ((10#$n < 1 || 10#$n > 999)); then
    echo "launches.sh: N must be a whole number from 1 to 999 (got '$n')" >&2
    exit 2
  fi
  n=$((10#$n))
fi
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
# The highest launch number in a folder (0 when it holds none).
last_launch() {
  local f k last=0
  for f in "$1"/launch-[0-9][0-9][0-9].json; do
    [[ -e $f ]] || continue
    k=${f##*/launch-}
    k=$((10#${k%.json}))
    ((k > last)) && last=$k
  done
  echo "$last"
}

if ((until_decided)); then
  for side in BASE CAND; do
    var=CCBENCH_$side
    if [[ ! -x ${!var:-$CCBENCH} ]]; then
      echo "launches.sh: no ccbench at ${!var:-$CCBENCH} ($var; build first)" >&2
      exit 2
    fi
  done
  mkdir -p "$base_dir" "$cand_dir" || exit 2
  # One launch of a side into its folder, numbered after its last one.
  launch_side() {
    local side=$1 dir=$2 bin=$3 flags=$4 k file rc
    shift 4  # the rest: the run flags common to both sides
    k=$(($(last_launch "$dir") + 1))
    if ((k > 999)); then
      echo "launches.sh: $dir already holds launch-999.json; at most 999 launches a folder" >&2
      return 2
    fi
    file=$dir/launch-$(printf %03d "$k").json
    echo "launches.sh: $side launch $k -> $file"
    # shellcheck disable=SC2086  # LAUNCH is a command line, the side's flags are word-split on purpose
    $LAUNCH "$bin" run -J "$file" --progress never "$@" $flags
    rc=$?
    if [[ $rc != 0 ]]; then
      echo "launches.sh: $side launch $k failed (exit $rc)" >&2
      return $rc
    fi
    ((PAUSE_S > 0)) && sleep "$PAUSE_S"
    return 0
  }
  rc=4
  while :; do
    nb=$(last_launch "$base_dir") nc=$(last_launch "$cand_dir")
    if ((nb >= min_launches && nc >= min_launches)); then
      echo "launches.sh: compare after $nb and $nc launches: ${CCBENCH_CAND:-$CCBENCH} compare $base_dir $cand_dir ${compare_args[*]}"
      "${CCBENCH_CAND:-$CCBENCH}" compare "$base_dir" "$cand_dir" "${compare_args[@]}"
      rc=$?
      if [[ $rc == 2 ]]; then
        echo "launches.sh: compare refused its input (exit 2, its message above says why); the launches are kept" >&2
        exit 2
      fi
      if [[ $rc != 4 ]]; then
        echo "launches.sh: decided after $nb and $nc launches (compare exit $rc)"
        exit $rc
      fi
    fi
    if ((nb >= max_launches && nc >= max_launches)); then
      echo "launches.sh: still inconclusive at --max-launches $max_launches a side (compare exit $rc)"
      exit $rc
    fi
    # Alternate: the side with fewer launches goes next, the baseline first on a tie.
    if ((nb <= nc && nb < max_launches)); then
      launch_side baseline "$base_dir" "${CCBENCH_BASE:-$CCBENCH}" "$base_flags" "$@" || exit $?
    fi
    nb=$(last_launch "$base_dir")
    if ((nc < nb || (nc < max_launches && nb >= max_launches))); then
      launch_side candidate "$cand_dir" "${CCBENCH_CAND:-$CCBENCH}" "$cand_flags" "$@" || exit $?
    fi
  done
fi

mkdir -p "$out" || exit 2
last=$(last_launch "$out")
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
