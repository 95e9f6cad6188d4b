#!/bin/bash
# Known answer: candidate/baseline link-rate ratio 1.18 and 1.00 through the whole migration
# journey (migrate.sh -> two result files -> ccbench compare with the 18% claim).
#   known_answer.sh 2x1   2 hosts x 1 rank: ratio 1.18 (claim confirmed) and 1.00 (refuted),
#                         the 1.00 run reusing the same baseline; launches alternate B C B C
#   known_answer.sh 2x2   2 hosts x 2 ranks: ratio 1.18 (claim confirmed)
source "$(dirname "$0")/common.sh"
layout=${1:-2x1}
# The geomean may sit this far from the rate ratio: the claim's verdict is the test, this bound
# catches a gross error. Measured at 2x1 in this repository's CI runs: 1.139-1.171 at 8-16 MiB,
# 1.157 at 16-32 MiB (each op's fixed overhead dilutes the ratio, docs/emulation.md).
tol=0.04

# check_verdict DIR RATE_RATIO EXPECTED_VERDICT EXPECTED_EXIT ACTUAL_EXIT
check_verdict() {
  local dir=$1 want=$2 verdict=$3 code=$4 rc=$5
  local got
  got=$(py "d = json.load(open('$dir/verdict.json')); print(d['verdict'], d['exit_code'], '%.4f' % d['summary']['ratio'])")
  echo "measured: verdict, exit code, geomean ratio = $got (rate ratio $want)"
  read -r v e r <<<"$got"
  [[ $v == "$verdict" ]] || fail "verdict $v, expected $verdict"
  [[ $e == "$code" && $rc == "$code" ]] || fail "compare exit code $e (migrate.sh $rc), expected $code"
  py "import sys; sys.exit(0 if abs($r - $want) <= $tol else 1)" || fail "geomean ratio $r is not within ±$tol of $want"
  ok "rate ratio $want: geomean $r, verdict $v (exit $e)"
}

# The fabric metadata went into the result files.
check_metadata() {
  py "
d = json.load(open('$1')); f = d['fabric']; s = d['system']
assert f.get('path') == 'tcp', f
assert f.get('generation') == '$2', f
assert abs(float(f.get('link_gbps')) - $3) < 1e-9, f
assert s.get('nodes') == 2, ('nodes', s.get('nodes'))
assert d['run']['label'] == '$4', d['run']['label']
assert d['run']['status'] == 'complete'
" || fail "metadata of $1"
}

case $layout in
  2x1)
    # Launches alternate between the fabrics (migrate.sh --alternate): with one side's 5 trials
    # run entirely before the other's, a CI host whose load changed in between measured 1.117
    # for the 1.18 rate ratio (inconclusive); alternating puts a load change on both sides.
    # 16-32 MiB instead of the sweep's 8-16 MiB: each op also pays a fixed overhead c (TCP ramp,
    # rendezvous, the reduction; 20-50 ms here) and the ratio measured is (T + c) / (T/1.18 + c); a
    # quiet CI host gave 1.139 at 8-16 MiB with c near 50 ms, which twice the bytes lifts to ~1.16.
    rc=0
    "$ROOT/scripts/emulate/migrate.sh" --out "$WORK/r118" --format text --alternate 5 -- -b 16M -e 32M || rc=$?
    check_verdict "$WORK/r118" 1.18 confirmed 0 "$rc"
    check_metadata "$WORK/r118/baseline/launch-001.json" v3 0.4 emulated-v3
    check_metadata "$WORK/r118/candidate/launch-005.json" v4 0.472 emulated-v4
    rc=0
    "$ROOT/scripts/emulate/migrate.sh" --out "$WORK/r100" --candidate emulated-v4-same-rate --alternate 5 \
      --baseline-result "$WORK/r118/baseline" -- -b 16M -e 32M || rc=$?
    check_verdict "$WORK/r100" 1.00 refuted 1 "$rc"
    ;;
  2x2)
    rc=0
    # 4 ranks on 2 cores: the reductions and the shared-memory copies between the two ranks of a
    # host cost about as much as the link at 400 Mbit/s (measured ratio 1.10 with emulated-v3/v4),
    # so this layout uses slower links of the same ratio (100 and 118 Mbit/s) to keep the sweep
    # bandwidth-bound, and 8 trials (the 4-rank trials vary more: 5 left the 90% CI straddling).
    for g in v3:100mbit:0.1 v4:118mbit:0.118; do
      IFS=: read -r gen rate gbps <<<"$g"
      printf 'name: emulated-%s-slow\ngeneration: %s\nrate: %s\nlink_gbps: %s\npath: tcp\n' "$gen" "$gen" "$rate" "$gbps" >"$WORK/$gen.yaml"
    done
    "$ROOT/scripts/emulate/migrate.sh" --out "$WORK/r118x4" --ranks-per-host 2 \
      --baseline "$WORK/v3.yaml" --candidate "$WORK/v4.yaml" -- -b 4M -e 4M --trials 8 || rc=$?
    check_verdict "$WORK/r118x4" 1.18 confirmed 0 "$rc"
    py "d = json.load(open('$WORK/r118x4/candidate.json')); assert d['system']['ranks'] == 4 and d['system']['nodes'] == 2, d['system']" ||
      fail "4 ranks on 2 nodes not recorded"
    ;;
  *) fail "unknown layout $layout" ;;
esac
[[ -z $(emu_leftovers) ]] || fail "migrate.sh left: $(emu_leftovers)"
ok "no namespace, link or file left behind"
