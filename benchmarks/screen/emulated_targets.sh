#!/bin/bash
# The screen's targets on the emulated fabric (docs/screen.md, "Targets on the emulated fabric"):
# 7 hosts at 400 Mbit/s, `ccbench screen` with default flags (only --hosts and --out), RUNS screens
# per case:
#   one_slow     one link at 60% (240 Mbit/s); the slow host moves with the run (h[r mod 7])
#   two_slow     two links at 60%, h[r mod 7] and h[(r+3) mod 7]
#   all_healthy  every link at 400 Mbit/s
# Prints one line per screen and a summary per case: found x/RUNS (every slow host named), screens
# with a healthy host blamed (slow, failed or unreachable), what became of each slow host (found
# slow / not judged: host busy / unjudged for noise / called healthy: the last one is the failure
# the screen must never show), healthy hosts left unjudged, and the screen's wall time and test
# count (mean, min-max).
#
#   sudo benchmarks/screen/emulated_targets.sh [--runs 10] [--cases one_slow,two_slow,all_healthy]
#        [--ccbench build/ccbench] [--keep DIR] [--beside 'CMD'] [-- EXTRA_SCREEN_FLAGS...]
# --beside CMD: runs `bash -c CMD` over and over beside the screens (a second build), ended with them.
# Needs root, iproute2 and mpirun. Uses the fabric prefix CCB_EMU_PREFIX (default ccb) and tears
# down only its own namespaces.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/scripts/emulate/lib.sh"
runs=10 cases=one_slow,two_slow,all_healthy ccbench=$ROOT/build/ccbench keep="" beside=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --ccbench) ccbench=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --beside) beside=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "emulated_targets.sh: unknown flag $1" >&2; exit 2 ;;
  esac
done
extra=("$@")
[[ -x $ccbench ]] || { echo "emulated_targets.sh: --ccbench $ccbench: not executable" >&2; exit 2; }
emu_require_or_skip
N=7 RATE=400mbit SLOW=240mbit
hosts=$(for ((i = 0; i < N; i++)); do printf '%s-h%d\n' "$CCB_EMU_PREFIX" "$i"; done | paste -sd,)
work=$(mktemp -d "${TMPDIR:-/tmp}/ccb-screen-targets.XXXXXX")
beside_pid=""
stop_beside() { [[ -z $beside_pid ]] || { kill -- -"$beside_pid" 2>/dev/null || true; wait "$beside_pid" 2>/dev/null || true; }; }
trap 'stop_beside; emu_down; rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
emu_up "$N" "$RATE" 2>/dev/null
if [[ -n $beside ]]; then
  # Its own process group, so that the whole build beside the screens ends with them.
  setsid bash -c "while true; do $beside >/dev/null 2>&1; done" &
  beside_pid=$!
fi

summary=()
for case in ${cases//,/ }; do
  found=0 blamed_screens=0 slow_found=0 slow_busy=0 slow_noisy=0 slow_healthy=0 healthy_unjudged=0 wall_sum=0 tests_sum=0 wall_min="" wall_max="" tests_min="" tests_max=""
  for ((r = 0; r < runs; r++)); do
    emu_set_rate "$RATE" 2>/dev/null
    slow=()
    case $case in
      one_slow) slow=($((r % N))) ;;
      two_slow) slow=($((r % N)) $(((r + 3) % N))) ;;
      all_healthy) ;;
      *) echo "emulated_targets.sh: unknown case $case" >&2; exit 2 ;;
    esac
    for s in "${slow[@]}"; do emu_set_rate "$SLOW" "$s" 2>/dev/null; done
    out=$work/$case-$r
    rc=0
    t0=$(date +%s.%N)
    timeout 1800 bash "$ROOT/scripts/emulate/fabric.sh" exec -- "$ccbench" screen --hosts "$hosts" --out "$out" \
      "${extra[@]}" >"$out.stdout" 2>"$out.stderr" || rc=$?
    t1=$(date +%s.%N)
    [[ -z $keep ]] || { mkdir -p "$keep"; cp -r "$out" "$out.stdout" "$out.stderr" "$keep/"; }
    want=$(for s in "${slow[@]}"; do printf '%s-h%d\n' "$CCB_EMU_PREFIX" "$s"; done | sort | paste -sd,)
    line=$(/usr/bin/python3 - "$out/screen.json" "$want" "$t0" "$t1" "$rc" <<'PY'
import json, sys
path, want, t0, t1, rc = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
want = set(w for w in want.split(',') if w)
try:
    d = json.load(open(path))
except Exception as e:
    print(f"0 1 0 {t1 - t0:.1f} 0 0 0 0 0 exit {rc}, no screen.json ({e})")
    sys.exit()
hosts = {h['name']: h for h in d['hosts']}
blamed = {n for n, h in hosts.items() if h['verdict'] in ('slow', 'failed', 'unreachable')}
found = int(want <= blamed)
false = sorted(blamed - want)
# Each slow host: found (slow), not judged: host busy (unjudged, a metric's tests all on a busy
# host), unjudged for another reason (noise), or called healthy.
fate = {'found': 0, 'busy': 0, 'noisy': 0, 'healthy': 0}
for n in want:
    v = hosts[n]['verdict']
    busy = any(m.get('host_busy_tests', 0) > 0 and m['tests'] == 0 for m in hosts[n].get('not_judged', []))
    fate['found' if v == 'slow' else 'healthy' if v == 'healthy' else 'busy' if busy else 'noisy'] += 1
unjudged_healthy = sum(1 for n, h in hosts.items() if n not in want and h['verdict'] == 'unjudged')
busy_tests = sum(1 for t in d['tests'] if t.get('host_busy'))
shown = {n: h for n, h in hosts.items() if h['verdict'] != 'healthy'}
why = '; '.join(f"{n} {shown[n]['verdict']}: {shown[n]['reason']}" for n in sorted(shown))
print(f"{found} {int(bool(false))} {d['summary']['tests']} {t1 - t0:.1f} {fate['found']} {fate['busy']} {fate['noisy']}"
      f" {fate['healthy']} {unjudged_healthy} exit {rc}, slow {sorted(want) or '-'}, {busy_tests} test(s) on a busy host,"
      f" not healthy {sorted(shown) or '-'}{' (' + why + ')' if why else ''}")
PY
)
    read -r f b tests wall sf sb sn sh hu rest <<<"$line"
    echo "$case run $r: ${tests} tests, ${wall} s, $rest"
    found=$((found + f)) blamed_screens=$((blamed_screens + b))
    slow_found=$((slow_found + sf)) slow_busy=$((slow_busy + sb)) slow_noisy=$((slow_noisy + sn))
    slow_healthy=$((slow_healthy + sh)) healthy_unjudged=$((healthy_unjudged + hu))
    wall_sum=$(awk -v a="$wall_sum" -v b="$wall" 'BEGIN {print a + b}')
    tests_sum=$((tests_sum + tests))
    [[ -n $wall_min ]] && ! awk -v a="$wall" -v b="$wall_min" 'BEGIN {exit !(a < b)}' || wall_min=$wall
    [[ -n $wall_max ]] && ! awk -v a="$wall" -v b="$wall_max" 'BEGIN {exit !(a > b)}' || wall_max=$wall
    [[ -n $tests_min ]] && ((tests >= tests_min)) || tests_min=$tests
    [[ -n $tests_max ]] && ((tests <= tests_max)) || tests_max=$tests
  done
  what=found
  [[ $case == all_healthy ]] && what="no slow host (found counts screens)"
  summary+=("$(printf '%s: %s %d/%d; screens with a healthy host blamed %d/%d; slow hosts: found %d, not judged: host busy %d, unjudged (noise) %d, called healthy %d; healthy hosts unjudged %d; wall %.1f s (%s-%s); tests %.1f (%s-%s)' \
    "$case" "$what" "$found" "$runs" "$blamed_screens" "$runs" "$slow_found" "$slow_busy" "$slow_noisy" "$slow_healthy" \
    "$healthy_unjudged" "$(awk -v a="$wall_sum" -v n="$runs" 'BEGIN {print a / n}')" \
    "$wall_min" "$wall_max" "$(awk -v a="$tests_sum" -v n="$runs" 'BEGIN {print a / n}')" "$tests_min" "$tests_max")")
done
echo "# $N hosts at $RATE, slow links at $SLOW, $runs screens per case, flags: ${extra[*]:-(defaults)}${beside:+, beside: $beside}"
printf '%s\n' "${summary[@]}"
