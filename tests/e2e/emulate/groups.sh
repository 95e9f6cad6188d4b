#!/bin/bash
# Known answer for concurrent groups (ccbench run --groups, docs/method.md "Concurrent groups") on the
# emulated fabric: two groups whose traffic crosses the same shaped link each get about half of it;
# two groups on links of their own each keep all of it. A 4 MiB broadcast in groups of 2 ranks
# (data one way, each group's rank 0 -> its other rank), every busbw a ratio to one group alone in
# the same run (B), never an absolute time.
#
#   groups.sh leaf-spine   configs/fabrics/emulated-leafspine.yaml: ccb-h0 ccb-h1 on leaf 0,
#                          ccb-h2 ccb-h3 on leaf 1, host links and uplinks at 200 Mbit/s
#     alone     2 ranks on ccb-h0,ccb-h2: B
#     shared    4 ranks, one per host, --groups mod:2: {0,2} = ccb-h0->ccb-h2 and {1,3} =
#               ccb-h1->ccb-h3, both through leaf 0's uplink: about B/2 each, B together
#     disjoint  the same ranks, --groups div:2: {0,1} inside leaf 0, {2,3} inside leaf 1: about B
#               each, 2B together
#   groups.sh flat         4 flat hosts at 100 Mbit/s; the shared link is a host's own
#     alone     2 ranks on ccb-h0,ccb-h1: B
#     shared    4 ranks, 2 per host on ccb-h0,ccb-h1, --groups mod:2: {0,2}, {1,3}, whose roots (world
#               ranks 0 and 1) both send through ccb-h0's link: B/2 each
#     disjoint  4 ranks on ccb-h0..3, --groups div:2: {0,1} and {2,3} on links of their own: B each
#
# Measured 2026-11-30 on the shared 2-core machine (load average 4-6), ratios to B:
#   leaf-spine (3 runs, B 0.0233-0.0239 GB/s): shared 0.49-0.53 each, 0.98-1.02 together (leaf 0's
#                         uplink carried 105 MB, 0 for disjoint); disjoint 0.95-0.99 each, 1.89-1.95
#   flat (4 runs, B 0.0117-0.0120 GB/s): shared 0.50-0.54 each, 0.98-1.03 together; disjoint
#                         0.96-1.02 each, 1.92-2.00
# Bands: shared 0.40-0.60 each and 0.85-1.10 together; disjoint 0.85-1.10 each and 1.70-2.20
# together. 13-22 s a variant.
source "$(dirname "$0")/common.sh"
variant=${1:-leaf-spine}
args=(--ops broadcast -b 4M -e 4M -n 8 -w 2 --in-place no --progress never --fabric-path tcp)
case $variant in
  leaf-spine)
    "$ROOT/scripts/emulate/fabric.sh" up --profile emulated-leafspine 2>"$WORK/up.log" || { cat "$WORK/up.log"; fail "up"; }
    args+=(--link-gbps 0.2)
    alone=(2 $P-h0:1,$P-h2:1)
    shared=(4 $P-h0:1,$P-h1:1,$P-h2:1,$P-h3:1)
    shared_hosts="[['$P-h0', '$P-h2'], ['$P-h1', '$P-h3']]"
    disjoint=(4 $P-h0:1,$P-h1:1,$P-h2:1,$P-h3:1)
    disjoint_hosts="[['$P-h0', '$P-h1'], ['$P-h2', '$P-h3']]"
    ;;
  flat)
    emu_up 4 100mbit
    args+=(--link-gbps 0.1)
    alone=(2 $P-h0:1,$P-h1:1)
    shared=(4 $P-h0:2,$P-h1:2)
    shared_hosts="[['$P-h0', '$P-h1'], ['$P-h0', '$P-h1']]"
    disjoint=(4 $P-h0:1,$P-h1:1,$P-h2:1,$P-h3:1)
    disjoint_hosts="[['$P-h0', '$P-h1'], ['$P-h2', '$P-h3']]"
    ;;
  *) fail "unknown variant '$variant' (leaf-spine or flat)" ;;
esac

# Bytes sent up through leaf 0's uplink so far (0 on the flat fabric).
uplink_up() { emu_uplink_bytes | awk '/lf0/ {sub("up=", "", $2); u = $2} END {print u + 0}'; }
run() {  # run NAME NP HOSTS [ccbench args...]
  local name=$1 np=$2 hosts=$3 rc=0 before
  shift 3
  before=$(uplink_up)
  emu_mpirun "$np" "$hosts" "$CCBENCH" run "${args[@]}" "$@" -J "$WORK/$name.json" >"$WORK/$name.out" 2>&1 || rc=$?
  [[ $rc -eq 0 ]] || { cat "$WORK/$name.out" >&2; fail "$name: mpirun exit $rc"; }
  echo $(($(uplink_up) - before)) >"$WORK/$name.uplink"
}
run alone "${alone[@]}"
run shared "${shared[@]}" --groups mod:2
run disjoint "${disjoint[@]}" --groups div:2
sed -n '/^# groups/p' "$WORK/shared.out" "$WORK/disjoint.out"

py "
alone = json.load(open('$WORK/alone.json'))['results'][0]
B = alone['busbw_gbps']
print('measured ($variant): alone busbw %.4f GB/s, median %.0f us' % (B, alone['time_us']['median']))
fails = []
def check(name, world_ranks, hosts, per_group, aggregate):
    doc = json.load(open('$WORK/%s.json' % name))
    g = doc['config']['groups']
    if g['world_ranks'] != world_ranks or g['hosts'] != hosts or g['nodes_per_group'] != 2:
        fails.append('%s: layout %s on %s' % (name, g['world_ranks'], g['hosts']))
    row = doc['results'][0]
    rg = row['groups']
    if row['wrong'] != 0 or rg['wrong_per_group'] != [0, 0]:
        fails.append('%s: wrong elements %s' % (name, rg['wrong_per_group']))
    ratios = [x / B for x in rg['busbw_gbps_per_group']]
    agg = rg['busbw_gbps_aggregate'] / B
    up = int(open('$WORK/%s.uplink' % name).read())
    print('measured ($variant): %-8s per-group busbw %s GB/s = %s x alone; aggregate %.4f GB/s = %.2f x alone; '
          'leaf 0 uplink up %d bytes' % (name, ['%.4f' % x for x in rg['busbw_gbps_per_group']],
                                        ['%.2f' % r for r in ratios], rg['busbw_gbps_aggregate'], agg, up))
    for r in ratios:
        if not per_group[0] <= r <= per_group[1]:
            fails.append('%s: a group got %.2f x alone, band %s' % (name, r, per_group))
    if not aggregate[0] <= agg <= aggregate[1]:
        fails.append('%s: aggregate %.2f x alone, band %s' % (name, agg, aggregate))
    return up
up_shared = check('shared', [[0, 2], [1, 3]], $shared_hosts, (0.40, 0.60), (0.85, 1.10))
up_disjoint = check('disjoint', [[0, 1], [2, 3]], $disjoint_hosts, (0.85, 1.10), (1.70, 2.20))
# On the leaf-spine, the shared groups' data went through leaf 0's uplink (2 groups x 4 MiB x 11
# broadcasts: check, 2 warm-up, 8 samples), the disjoint groups' did not.
if '$variant' == 'leaf-spine' and not (up_shared > 2 * 11 * 4 * 2**20 and up_disjoint < 4 * 2**20):
    fails.append('uplink bytes: shared %d, disjoint %d' % (up_shared, up_disjoint))
if fails:
    print('\n'.join(fails)); sys.exit(1)
" || fail "concurrent groups outside their bands"
ok "$variant: two groups sharing a link get about half of it each; on links of their own, all of it"
emu_down
[[ -z $(emu_leftovers) ]] || fail "left behind: $(emu_leftovers)"
ok "no namespace, link or file left behind"
