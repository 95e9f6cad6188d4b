#!/bin/bash
# Known answers of `ccbench congestion` on the emulated leaf-spine fabric (docs/congestion.md,
# "Known answers"): profile emulated-leafspine, 4 hosts at 200 Mbit/s each way, ccb-h0 and ccb-h1
# behind leaf 0, ccb-h2 and ccb-h3 behind leaf 1, each leaf's uplink to the spine 200 Mbit/s.
#
# Run 1, measured set inside leaf 0: 6 ranks, h0 {0, 1}, h1 {2, 3}, h2 {4}, h3 {5}; measured 0 and 2.
#   alltoall (4 <-> 5) stays inside leaf 1: no link of the measured set; the bandwidth tests'
#   impact factors stay within the band [0.9, 1.2] (measured 0.99-1.15 in 9 runs, flat and leaf-spine);
#   incast (4 -> 1 into h0's link, 5 -> 3 into h1's, through the uplinks) shares the measured hosts'
#   links: factor >= 1.35 with its 95% interval above 1.2 (measured 1.57-1.77); --max-impact 1.3
#   exits 1.
# Run 2, measured set across the leaves: 4 ranks, h0 {0}, h2 {1}, h1 {2}, h3 {3}; measured 0 and 1.
#   alltoall (2 <-> 3, h1 <-> h3) crosses no measured host's link but both uplinks, which the
#   measured traffic crosses too: factor >= 1.35 with its interval above 1.2 (measured 1.50-1.85).
# Settings: --bw-bytes 1M, congestor ops of 4 MiB, -n 9, 6 trials (8 in run 2, whose two TCP flows
# per uplink share it less evenly from trial to trial). About 80 s for both runs.
# Measured ranks run on CPU 0, congestors on CPU 1 (pin_ranks.sh): on this 2-core machine a
# congestor's CPU would otherwise slow the measured ranks whatever the links do.
source "$(dirname "$0")/common.sh"
trials=${CCB_CONGESTION_TRIALS:-6}
profile=$(emu_profile_path emulated-leafspine)
emu_up 4 "$(emu_profile "$profile" rate)" "$(emu_profile "$profile" leaves)" "$(emu_profile "$profile" uplink_rate)"
export OMPI_MCA_mpi_yield_when_idle=1

# congestion NAME NP HOSTS MEASURED_RANKS ARGS...: one run; exit code in $WORK/NAME.rc
congestion() {
  local name=$1 np=$2 hosts=$3 measured=$4 rc=0 start=$SECONDS
  shift 4
  CCB_PIN_MEASURED=$measured emu_mpirun "$np" "$hosts" -x CCB_PIN_MEASURED -x OMPI_MCA_mpi_yield_when_idle \
    "$ROOT/tests/e2e/emulate/pin_ranks.sh" "$CCBENCH" congestion --bw-bytes 1M --congestor-bytes 4M \
    --trials "$trials" -n 9 -w 1 -T 60 --fabric-path tcp --link-gbps 0.2 -J "$WORK/$name.json" "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
  grep -v "setpgid" "$WORK/$name.err" >&2 || true
  cat "$WORK/$name.out"
  echo "$name: exit $rc, $((SECONDS - start))s"
  echo "$rc" >"$WORK/$name.rc"
}

# check NAME PATTERN LOW HIGH CI_ABOVE: the bandwidth tests' median factors of PATTERN in [LOW, HIGH]
# and, when CI_ABOVE is not "-", the interval's lower end above it.
check() {
  py "
d = json.load(open('$WORK/$1.impact.json'))
f = {(i['test'], i['pattern']): i['impact_median'] for i in d['impacts']}
for test in ['allreduce 1M', 'alltoall 1M']:
    x = f[(test, '$2')]
    print('$1: %-13s %-8s %.3f [%.3f, %.3f]' % (test, '$2', x['estimate'], *x['ci95']))
    assert $3 <= x['estimate'] <= $4, (test, 'factor out of [$3, $4]', x)
    assert '$5' == '-' or x['ci95'][0] > float('$5'), (test, 'interval not above $5', x)
for p in d['phases']:
    if p['phase'] == 'isolated':
        assert p['congestor_ops'] == 0, p
    else:
        assert p['congestor_ops'] >= 1 and p['stop_wait_ms'] <= 2 * p['congestor_op_ms'] + 100, p
"
}

congestion leaf "6" "$(emu_host_ns 0):2,$(emu_host_ns 1):2,$(emu_host_ns 2):1,$(emu_host_ns 3):1" "0 2" \
  --measured-hosts 2 --measured-per-host 1 --congestors alltoall,incast --max-impact 1.3
congestion across "4" "$(emu_host_ns 0):1,$(emu_host_ns 2):1,$(emu_host_ns 1):1,$(emu_host_ns 3):1" "0 1" \
  --measured-hosts 2 --congestors alltoall --trials $((trials + 2))
emu_link_bytes
emu_uplink_bytes

[[ $(cat "$WORK/leaf.rc") == 1 ]] || fail "run 1 with --max-impact 1.3 exited $(cat "$WORK/leaf.rc"), expected 1 (incast above 1.3)"
[[ $(cat "$WORK/across.rc") == 0 ]] || fail "run 2 (no gate) exited $(cat "$WORK/across.rc")"
py "d = json.load(open('$WORK/leaf.impact.json')); assert d['gate']['verdict'] == 'above', d['gate']" || fail "run 1's gate"
check leaf alltoall 0.9 1.2 - || fail "alltoall inside the other leaf moved the factor out of [0.9, 1.2]"
check leaf incast 1.35 5 1.2 || fail "incast onto the measured hosts' links did not raise the factor clearly"
check across alltoall 1.35 5 1.2 || fail "alltoall through the shared uplinks did not raise the factor clearly"
ok "congestors inside the other leaf: within [0.9, 1.2]; incast onto the measured links and alltoall through the shared uplinks: above 1.35, intervals above 1.2; gate exit 1"

# compare and report read the phase files.
crc=0
"$CCBENCH" compare "$WORK/leaf.incast.isolated.json" "$WORK/leaf.incast.congested.json" --format json >"$WORK/cmp.json" || crc=$?
[[ $crc == 0 ]] || fail "compare of the incast files exited $crc"
py "
d = json.load(open('$WORK/cmp.json'))
for r in d['rows']:
    if r['bytes'] != 1048576: continue
    print('compare incast isolated vs congested: %s 1M busbw ratio %.3f (1 / impact)' % (r['op'], r['ratio']))
    assert r['ratio'] < 1 / 1.35 and r['significant'], r
" || fail "compare's ratio of the incast files"
"$CCBENCH" report "$WORK"/leaf.*.isolated.json "$WORK"/leaf.*.congested.json --format markdown >/dev/null || fail "report of the phase files"
ok "compare and report read the result files"
