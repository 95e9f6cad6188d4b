#!/bin/bash
# Known answer for concurrent groups (ccbench run --groups, docs/method.md "Concurrent groups") on the
# emulated fabric: 4 hosts, every host's link shaped to 100 Mbit/s each way. A 4 MiB broadcast in
# groups of 2 ranks, one rank per host, is bound by the root host's link (one direction only, so no
# overlap of the two directions blurs it).
#   alone     2 ranks on ccb-h0,ccb-h1, no groups: the reference busbw B (about the link rate)
#   shared    4 ranks, 2 per host on ccb-h0,ccb-h1, --groups mod:2: groups {0,2} and {1,3}, whose
#             roots (world ranks 0 and 1) both send through ccb-h0's link: each group gets about
#             B/2, all groups together about B
#   disjoint  4 ranks, 1 per host on ccb-h0..3, --groups div:2: groups {0,1} (ccb-h0,ccb-h1) and
#             {2,3} (ccb-h2,ccb-h3) on links of their own: each group gets about B, together 2B
# Measured 2026-11-30, 3 runs on the shared 2-core machine (load average 5-6): B = 0.0119-0.0120
# GB/s (95% of the 0.0125 GB/s link); shared 0.50-0.52 x B per group, 0.98-0.99 x B in aggregate;
# disjoint 0.96-1.00 x B per group, 1.92-1.96 x B in aggregate; about 22 s a run. Bands: per group
# 0.40-0.60 x B shared and 0.85-1.10 x B disjoint; aggregate 0.85-1.10 x B shared, 1.70-2.20 x B
# disjoint.
source "$(dirname "$0")/common.sh"
rate=100mbit
args=(--ops broadcast -b 4M -e 4M -n 8 -w 2 --in-place no --fabric-path tcp --link-gbps 0.1)

emu_up 4 "$rate"
run() {  # run NAME NP HOSTS [ccbench args...]
  local name=$1 np=$2 hosts=$3
  shift 3
  local rc=0
  emu_mpirun "$np" "$hosts" "$CCBENCH" run "${args[@]}" "$@" -J "$WORK/$name.json" >"$WORK/$name.out" 2>&1 || rc=$?
  [[ $rc -eq 0 ]] || { cat "$WORK/$name.out" >&2; fail "$name: mpirun exit $rc"; }
}
run alone 2 ccb-h0:1,ccb-h1:1
run shared 4 ccb-h0:2,ccb-h1:2 --groups mod:2
run disjoint 4 ccb-h0:1,ccb-h1:1,ccb-h2:1,ccb-h3:1 --groups div:2
sed -n '/^# groups/p;/^ *4194304/p' "$WORK/shared.out"

py "
alone = json.load(open('$WORK/alone.json'))['results'][0]
B = alone['busbw_gbps']
print('measured: alone busbw %.4f GB/s (link 0.0125 GB/s), median %.0f us' % (B, alone['time_us']['median']))
fails = []
def check(name, world_ranks, hosts, per_group, aggregate):
    doc = json.load(open('$WORK/%s.json' % name))
    g = doc['config']['groups']
    if g['world_ranks'] != world_ranks or g['hosts'] != hosts:
        fails.append('%s: layout %s on %s' % (name, g['world_ranks'], g['hosts']))
    row = doc['results'][0]
    rg = row['groups']
    if row['wrong'] != 0 or rg['wrong_per_group'] != [0, 0]:
        fails.append('%s: wrong elements %s' % (name, rg['wrong_per_group']))
    ratios = [x / B for x in rg['busbw_gbps_per_group']]
    agg = rg['busbw_gbps_aggregate'] / B
    print('measured: %-8s per-group busbw %s GB/s = %s x alone; aggregate %.4f GB/s = %.2f x alone' % (
        name, ['%.4f' % x for x in rg['busbw_gbps_per_group']], ['%.2f' % r for r in ratios],
        rg['busbw_gbps_aggregate'], agg))
    for r in ratios:
        if not per_group[0] <= r <= per_group[1]:
            fails.append('%s: a group got %.2f x alone, band %s' % (name, r, per_group))
    if not aggregate[0] <= agg <= aggregate[1]:
        fails.append('%s: aggregate %.2f x alone, band %s' % (name, agg, aggregate))
check('shared', [[0, 2], [1, 3]], [['ccb-h0', 'ccb-h1'], ['ccb-h0', 'ccb-h1']], (0.40, 0.60), (0.85, 1.10))
check('disjoint', [[0, 1], [2, 3]], [['ccb-h0', 'ccb-h1'], ['ccb-h2', 'ccb-h3']], (0.85, 1.10), (1.70, 2.20))
if fails:
    print('\n'.join(fails)); sys.exit(1)
" || fail "concurrent groups outside their bands"
ok "two groups sharing a link get about half of it each; on links of their own, all of it"
emu_down
[[ -z $(emu_leftovers) ]] || fail "left behind: $(emu_leftovers)"
ok "no namespace, link or file left behind"
