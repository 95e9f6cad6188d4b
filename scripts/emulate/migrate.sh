#!/bin/bash
# The migration check, end to end, on one machine: run the same sweep on an emulated baseline
# fabric and on an emulated candidate fabric, then let `ccbench compare` judge a claim.
# See docs/emulation.md. Needs root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"

baseline=emulated-v3
candidate=emulated-v4
claim=$CCB_EMU_ROOT/configs/claims/emulated-18pct.yaml
sweep=$CCB_EMU_ROOT/configs/sweeps/emulated-migration.yaml
hosts=2
ranks_per_host=1
out=""
format=text
compare_args=()
run_args=()
baseline_result=""
alternate=0
# Open MPI's default allreduce on 2 ranks exchanges both directions at once; on a loaded machine
# the two directions overlap in some iterations and serialise in others, a bimodal time (S/R or
# 2S/R) that hides the link rate. Pinning the reduce+broadcast algorithm makes every byte cross
# each link once per direction in turn: time = 2S/R + a small constant. CCB_EMU_MPIRUN_ARGS=""
# restores Open MPI's choice.
# A tbf burst of 256 KiB (lib.sh's default is 32 KiB): the migration check moves MiBs per op, and
# with the small burst a 472 Mbit/s link delivered 8 MiB in 300-310 ms (+-1.5-2.6% between
# samples) against 290 ms (+-0.1%) with 256 KiB, 98% of the shaped rate at 400 and 472 Mbit/s alike
# (ratio of the medians 1.165-1.183 for a rate ratio of 1.18, docs/emulation.md).
export CCB_EMU_BURST=${CCB_EMU_BURST:-256kb}
export CCB_EMU_MPIRUN_ARGS=${CCB_EMU_MPIRUN_ARGS---mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 2}

usage() {
  cat <<EOF
usage: $0 [options] [-- extra ccbench run flags]

Runs the same ccbench sweep on two emulated fabrics (baseline, then candidate), writes two result
files with their fabric metadata, and runs 'ccbench compare BASE CAND --claim FILE --looks once'
(the launch count is fixed in advance, so compare's single-look rule applies): the verdict is
printed and is this script's exit code (0 confirmed, 1 refuted, 3 not comparable, 4 inconclusive;
2 usage; other codes: a sweep failed, with ccbench run's code).

NEEDS ROOT. While it runs, this machine gets network namespaces ${CCB_EMU_PREFIX}-br and ${CCB_EMU_PREFIX}-h0..${CCB_EMU_PREFIX}-hN-1
(each host's veth pairs, the bridges, addresses in ${CCB_EMU_SUBNET}.0/24 and
${CCB_EMU_MGMT_SUBNET}.0/24 and tc tbf qdiscs live only inside them), files /etc/netns/${CCB_EMU_PREFIX}-*/hosts
and $CCB_EMU_STATE. The root namespace's interfaces, routes and firewall are not touched. Everything
is removed when the script exits, whatever the outcome (also on Ctrl-C); 'fabric.sh down' removes
leftovers of a run that was killed with SIGKILL.

options:
  --baseline PROFILE     fabric profile, a name in configs/fabrics/ or a file (default $baseline)
  --candidate PROFILE    (default $candidate)
  --claim FILE           claim for ccbench compare (default configs/claims/emulated-18pct.yaml)
  --expect-speedup X     instead of --claim: e.g. 18% (with --tolerance, default 5%)
  --tolerance X
  --sweep FILE           ccbench run --config file (default configs/sweeps/emulated-migration.yaml)
  --hosts N              emulated hosts (default $hosts)
  --ranks-per-host K     (default $ranks_per_host)
  --baseline-result FILE reuse a baseline result file (or, with --alternate, folder) instead of
                         running the baseline sweep
  --alternate N          N launches of one trial per side, alternating baseline and candidate
                         (B C B C ...), into baseline/ and candidate/ folders that compare reads:
                         a load or drift of the machine then falls on both sides alike
                         (docs/compare.md, "Get trials by separate launches")
  --out DIR              where baseline.json, candidate.json (or the folders), verdict.json go
                         (default results/local/emulate-<time>)
  --format text|json|markdown   how the verdict is printed (default text; verdict.json is always written)
environment: CCBENCH=path of the ccbench binary (default build/ccbench)
             CCB_EMU_MPIRUN_ARGS=extra mpirun flags (default pins Open MPI's allreduce to
             reduce+broadcast: "$CCB_EMU_MPIRUN_ARGS"; set it empty for Open MPI's own choice)
EOF
}

while [[ $# -gt 0 ]]; do
  # An option that takes a value and is last on the line: say which (was "$2: unbound variable").
  case $1 in
    --baseline | --baseline-result | --alternate | --candidate | --claim | --expect-speedup | --tolerance | \
      --sweep | --hosts | --ranks-per-host | --out | --format)
      [[ $# -ge 2 ]] || { echo "migrate.sh: $1 needs a value (see --help)" >&2; exit 2; } ;;
  esac
  case $1 in
    --baseline) baseline=$2; shift 2 ;;
    --baseline-result) baseline_result=$2; shift 2 ;;
    --alternate) alternate=$2; shift 2 ;;
    --candidate) candidate=$2; shift 2 ;;
    --claim) claim=$2; shift 2 ;;
    --expect-speedup) compare_args+=(--expect-speedup "$2"); claim=""; shift 2 ;;
    --tolerance) compare_args+=(--tolerance "$2"); shift 2 ;;
    --sweep) sweep=$2; shift 2 ;;
    --hosts) hosts=$2; shift 2 ;;
    --ranks-per-host) ranks_per_host=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --format) format=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; run_args=("$@"); break ;;
    *) echo "migrate.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

# Numbers are checked as digits before any arithmetic sees them ($((hosts - 1)) below).
[[ $hosts =~ ^[0-9]{1,2}$ ]] && ((10#$hosts >= 1 && 10#$hosts <= 64)) ||
  { echo "migrate.sh: --hosts must be a whole number 1..64, got '$hosts'" >&2; exit 2; }
[[ $ranks_per_host =~ ^[0-9]{1,4}$ ]] && ((10#$ranks_per_host >= 1 && 10#$ranks_per_host <= 1024)) ||
  { echo "migrate.sh: --ranks-per-host must be a whole number 1..1024, got '$ranks_per_host'" >&2; exit 2; }
[[ $alternate =~ ^[0-9]{1,3}$ ]] && ((10#$alternate <= 100)) ||
  { echo "migrate.sh: --alternate must be a whole number 0..100 (launches per side), got '$alternate'" >&2; exit 2; }
hosts=$((10#$hosts)) ranks_per_host=$((10#$ranks_per_host)) alternate=$((10#$alternate))

ccbench=${CCBENCH:-$CCB_EMU_ROOT/build/ccbench}
[[ -x $ccbench ]] || { echo "migrate.sh: no ccbench binary at $ccbench (build it, or set CCBENCH=path)" >&2; exit 2; }
ccbench=$(cd "$(dirname "$ccbench")" && pwd)/$(basename "$ccbench")
export CCBENCH=$ccbench
[[ $(id -u) -eq 0 ]] || { echo "migrate.sh: needs root (it creates network namespaces, veth pairs, bridges and tc qdiscs; see --help)" >&2; exit 2; }
base_file=$(emu_profile_path "$baseline")
cand_file=$(emu_profile_path "$candidate")
[[ -z $claim || -f $claim ]] || { echo "migrate.sh: no claim file $claim" >&2; exit 2; }
[[ -f $sweep ]] || { echo "migrate.sh: no sweep file $sweep" >&2; exit 2; }
[[ -n $out ]] || out=$CCB_EMU_ROOT/results/local/emulate-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"

trap 'emu_down' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cat <<EOF
== ccbench migration check on emulated fabrics (needs root)
   This machine gets, until the script exits: network namespaces ${CCB_EMU_BR_NS}, $(emu_host_ns 0)..$(emu_host_ns $((hosts - 1))) with
   veth pairs, two bridges and tc tbf qdiscs inside them, /etc/netns/${CCB_EMU_PREFIX}-*/hosts, $CCB_EMU_STATE.
   All of it is removed at exit.
   baseline:  $(emu_profile "$base_file" name) ($(emu_profile "$base_file" rate) per link, generation $(emu_profile "$base_file" generation))
   candidate: $(emu_profile "$cand_file" name) ($(emu_profile "$cand_file" rate) per link, generation $(emu_profile "$cand_file" generation))
   sweep:     ${sweep#"$CCB_EMU_ROOT"/} on $hosts hosts x $ranks_per_host ranks
   claim:     ${claim:+${claim#"$CCB_EMU_ROOT"/}}${compare_args[*]:-}
   results:   $out
EOF

# One launch of one fabric's sweep into $out/RESULT.json; its full output (ccbench's tables, mpirun's
# messages) goes to $out/RESULT.log, the console gets the summary lines.
run_side() {
  local side=$1 profile=$2 result=$3 rc=0
  shift 3
  echo
  echo "== $side: $(emu_profile "$profile" name), $(emu_profile "$profile" rate) per link (log: $out/$result.log)"
  "$here/fabric.sh" run --hosts "$hosts" --ranks-per-host "$ranks_per_host" --profile "$profile" -- \
    --config "$sweep" --progress never -J "$out/$result.json" "${run_args[@]}" "$@" >"$out/$result.log" 2>&1 || rc=$?
  grep -E '^# [0-9]+ results|^emulate:   ' "$out/$result.log" | sed -e 's/^# /   /' -e 's/^emulate:   /   link bytes /' || true
  if [[ $rc -ne 0 ]]; then
    tail -n 20 "$out/$result.log" >&2
    echo "migrate.sh: the $side sweep failed (exit $rc); partial results in $out/$result.json(l), log $out/$result.log" >&2
    exit "$rc"
  fi
}
if ((alternate > 0)); then
  base_arg=$out/baseline cand_arg=$out/candidate
  mkdir -p "$cand_arg"
  if [[ -n $baseline_result ]]; then
    [[ -d $baseline_result ]] || { echo "migrate.sh: --alternate reuses a baseline folder; $baseline_result is not one" >&2; exit 2; }
    [[ $(realpath "$baseline_result") == $(realpath -m "$base_arg") ]] || { rm -rf "$base_arg"; cp -r "$baseline_result" "$base_arg"; }
    echo
    echo "== baseline: reusing $baseline_result"
  else
    mkdir -p "$base_arg"
  fi
  for ((i = 1; i <= alternate; i++)); do
    n=$(printf '%03d' "$i")
    [[ -n $baseline_result ]] || run_side baseline "$base_file" "baseline/launch-$n" --trials 1
    run_side candidate "$cand_file" "candidate/launch-$n" --trials 1
  done
else
  base_arg=$out/baseline.json cand_arg=$out/candidate.json
  if [[ -n $baseline_result ]]; then
    [[ -f $baseline_result ]] || { echo "migrate.sh: no baseline result $baseline_result" >&2; exit 2; }
    [[ $(realpath "$baseline_result") == $(realpath -m "$base_arg") ]] || cp "$baseline_result" "$base_arg"
    echo
    echo "== baseline: reusing $baseline_result"
  else
    run_side baseline "$base_file" baseline
  fi
  run_side candidate "$cand_file" candidate
fi

echo
echo "== verdict"
rc=0
# The launch count is fixed in advance and compare asked once: the single-look rule (docs/compare.md
# "Asking again").
"$ccbench" compare "$base_arg" "$cand_arg" ${claim:+--claim "$claim"} "${compare_args[@]}" --looks once \
  --format json --out "$out/verdict.json" >/dev/null || rc=$?
if [[ $rc -eq 2 ]]; then
  echo "migrate.sh: ccbench compare failed (exit 2)" >&2
  "$ccbench" compare "$base_arg" "$cand_arg" ${claim:+--claim "$claim"} "${compare_args[@]}" --looks once || true
  exit 2
fi
# The same rule as the verdict file and the exit code.
"$ccbench" compare "$base_arg" "$cand_arg" ${claim:+--claim "$claim"} "${compare_args[@]}" --looks once \
  --format "$format" || true
echo
echo "verdict file: $out/verdict.json (exit code $rc)"
exit "$rc"
