#!/bin/bash
# Known answers of `ccbench congestion` on the emulated fabric (docs/congestion.md, "Known answers").
# 4 hosts, links shaped to 200 Mbit/s each way. 6 ranks: ccb-h0 holds ranks 0 and 1, ccb-h1 ranks 2
# and 3, ccb-h2 rank 4, ccb-h3 rank 5. Measured: ranks 0 and 2 (one on each of h0 and h1, so their
# allreduce and alltoall cross both measured links). Congestors: 1 and 3 on the measured hosts
# (incast receivers), 4 and 5 on the others.
#   alltoall (4 <-> 5) crosses only h2's and h3's links: the bandwidth tests' impact factors stay
#   within the band [0.9, 1.25] (measured 0.99-1.15 over six runs, docs/congestion.md);
#   incast (4 -> 1 into h0's link, 5 -> 3 into h1's) shares the measured links: factor >= 1.6 with
#   its 95% interval above 1.25 (measured 2.0-2.7), and --max-impact 1.5 exits 1.
# Measured ranks run on CPU 0, congestors on CPU 1 (pin_ranks.sh): on this 2-core machine a
# congestor's CPU would otherwise slow the measured ranks whatever the links do.
source "$(dirname "$0")/common.sh"
rate=${CCB_CONGESTION_RATE:-200mbit}
trials=${CCB_CONGESTION_TRIALS:-6}
emu_up 4 "$rate"
out=$WORK/c.json
rc=0
start=$SECONDS
CCB_PIN_MEASURED="0 2" OMPI_MCA_mpi_yield_when_idle=1 \
  emu_mpirun 6 "$(emu_host_ns 0):2,$(emu_host_ns 1):2,$(emu_host_ns 2):1,$(emu_host_ns 3):1" \
  -x CCB_PIN_MEASURED -x OMPI_MCA_mpi_yield_when_idle "$ROOT/tests/e2e/emulate/pin_ranks.sh" \
  "$CCBENCH" congestion --measured-hosts 2 --measured-per-host 1 --congestors alltoall,incast \
  --bw-bytes 1M --congestor-bytes 2M --trials "$trials" -n 5 -w 1 -T 60 --fabric-path tcp \
  --max-impact 1.5 -J "$out" >"$WORK/stdout" 2>"$WORK/stderr" || rc=$?
elapsed=$((SECONDS - start))
grep -v "setpgid" "$WORK/stderr" >&2 || true
cat "$WORK/stdout"
echo "congestion run: exit $rc, ${elapsed}s at $rate, $trials trials"
emu_link_bytes
[[ $rc == 1 ]] || fail "ccbench congestion --max-impact 1.5 exited $rc, expected 1 (incast above 1.5)"

py "
d = json.load(open('$WORK/c.impact.json'))
assert d['gate']['verdict'] == 'above', d['gate']
f = {(i['test'], i['pattern']): i for i in d['impacts']}
for test in ['allreduce 1M', 'alltoall 1M']:
    n = f[(test, 'alltoall')]['impact_median']
    c = f[(test, 'incast')]['impact_median']
    print('%-13s alltoall (off the measured links) %.3f [%.3f, %.3f]   incast (onto them) %.3f [%.3f, %.3f]' % (
        test, n['estimate'], *n['ci95'], c['estimate'], *c['ci95']))
    assert 0.9 <= n['estimate'] <= 1.25, (test, 'alltoall congestors moved the factor out of [0.9, 1.25]', n)
    assert c['estimate'] >= 1.6 and c['ci95'][0] > 1.25, (test, 'incast did not raise the factor clearly', c)
for p in d['phases']:
    if p['phase'] == 'isolated':
        assert p['congestor_ops'] == 0, p
    else:
        assert p['congestor_ops'] >= 1 and p['stop_wait_ms'] <= 2 * p['congestor_op_ms'] + 100, p
" || fail "known answers (see the table above)"
ok "alltoall congestors off the measured links within [0.9, 1.25]; incast onto them above 1.6; gate exit 1"

# compare and report read the phase files.
crc=0
"$CCBENCH" compare "$WORK/c.incast.isolated.json" "$WORK/c.incast.congested.json" --format json >"$WORK/cmp.json" || crc=$?
[[ $crc == 0 ]] || fail "compare of the incast files exited $crc"
py "
d = json.load(open('$WORK/cmp.json'))
for r in d['rows']:
    if r['bytes'] != 1048576: continue
    print('compare incast isolated vs congested: %s 1M busbw ratio %.3f (1 / impact)' % (r['op'], r['ratio']))
    assert r['ratio'] < 1 / 1.5 and r['significant'], r
" || fail "compare's ratio of the incast files"
"$CCBENCH" report "$WORK"/c.*.isolated.json "$WORK"/c.*.congested.json --format markdown >/dev/null || fail "report of the phase files"
ok "compare and report read the result files"
