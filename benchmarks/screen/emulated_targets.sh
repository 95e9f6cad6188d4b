#!/bin/bash
# The screen's targets on the emulated fabric (docs/screen.md, "Targets on the emulated fabric"):
# 7 hosts at 400 Mbit/s, `ccbench screen` with default flags (only --hosts and --out), RUNS screens
# per case:
#   one_slow     one link at 60% (240 Mbit/s); the slow host moves with the run (h[r mod 7])
#   two_slow     two links at 60%, h[r mod 7] and h[(r+3) mod 7]
#   all_healthy  every link at 400 Mbit/s
# Prints one line per screen and a summary per case: found x/RUNS (every slow host named), screens
# with a healthy host blamed, and the screen's wall time and test count (mean, min-max).
#
#   sudo benchmarks/screen/emulated_targets.sh [--runs 10] [--cases one_slow,two_slow,all_healthy]
#        [--ccbench build/ccbench] [--keep DIR] [-- EXTRA_SCREEN_FLAGS...]
# Needs root, iproute2 and mpirun. Uses the fabric prefix CCB_EMU_PREFIX (default ccb) and tears
# down only its own namespaces.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/scripts/emulate/lib.sh"
runs=10 cases=one_slow,two_slow,all_healthy ccbench=$ROOT/build/ccbench keep=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --ccbench) ccbench=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
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
trap 'emu_down; rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
emu_up "$N" "$RATE" 2>/dev/null

summary=()
for case in ${cases//,/ }; do
  found=0 blamed_screens=0 wall_sum=0 tests_sum=0 wall_min="" wall_max="" tests_min="" tests_max=""
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
    print(f"0 1 0 {t1 - t0:.1f} exit {rc}, no screen.json ({e})")
    sys.exit()
bad = {h['name']: h for h in d['hosts'] if h['verdict'] != 'healthy'}
found = int(want <= set(bad))
false = sorted(set(bad) - want)
why = '; '.join(f"{n} {bad[n]['verdict']}: {bad[n]['reason']}" for n in sorted(bad))
nj = sorted({m['metric'] for h in d['hosts'] for m in h.get('not_judged', [])})
print(f"{found} {int(bool(false))} {d['summary']['tests']} {t1 - t0:.1f} exit {rc}, slow {sorted(want) or '-'},"
      f" blamed {sorted(bad) or '-'}{' (' + why + ')' if why else ''}{', not judged: ' + ','.join(nj) if nj else ''}")
PY
)
    read -r f b tests wall rest <<<"$line"
    echo "$case run $r: ${tests} tests, ${wall} s, $rest"
    found=$((found + f)) blamed_screens=$((blamed_screens + b))
    wall_sum=$(awk -v a="$wall_sum" -v b="$wall" 'BEGIN {print a + b}')
    tests_sum=$((tests_sum + tests))
    [[ -n $wall_min ]] && ! awk -v a="$wall" -v b="$wall_min" 'BEGIN {exit !(a < b)}' || wall_min=$wall
    [[ -n $wall_max ]] && ! awk -v a="$wall" -v b="$wall_max" 'BEGIN {exit !(a > b)}' || wall_max=$wall
    [[ -n $tests_min ]] && ((tests >= tests_min)) || tests_min=$tests
    [[ -n $tests_max ]] && ((tests <= tests_max)) || tests_max=$tests
  done
  what=found
  [[ $case == all_healthy ]] && what="no slow host (found counts screens)"
  summary+=("$(printf '%s: %s %d/%d; screens with a healthy host blamed %d/%d; wall %.1f s (%s-%s); tests %.1f (%s-%s)' \
    "$case" "$what" "$found" "$runs" "$blamed_screens" "$runs" "$(awk -v a="$wall_sum" -v n="$runs" 'BEGIN {print a / n}')" \
    "$wall_min" "$wall_max" "$(awk -v a="$tests_sum" -v n="$runs" 'BEGIN {print a / n}')" "$tests_min" "$tests_max")")
done
echo "# $N hosts at $RATE, slow links at $SLOW, $runs screens per case, flags: ${extra[*]:-(defaults)}"
printf '%s\n' "${summary[@]}"
