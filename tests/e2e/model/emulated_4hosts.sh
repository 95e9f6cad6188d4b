#!/bin/bash
# ccbench model against a measurement it never saw: sweeps allreduce on 2, 3 and 4 emulated hosts
# (1 rank each, 400 Mbit/s links), fits on 2 and 3 hosts, predicts 4 hosts at the bandwidth-bound
# sizes (1-8 MiB) and checks that every measured 4-host median lies inside the 90% band. Prints the
# errors (docs/model.md quotes them). Open MPI's ring allreduce (coll_tuned algorithm 4): each host
# sends and receives on its own link at once, as NCCL's ring does over EFA.
#   CCB_MODEL_KEEP=DIR keeps the result files and the model there.
source "$(dirname "$0")/../emulate/common.sh"
export CCB_EMU_MPIRUN_ARGS="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4"
out=${CCB_MODEL_KEEP:-$WORK}
mkdir -p "$out"
for hosts in 2 3 4; do
  "$ROOT/scripts/emulate/fabric.sh" run --hosts "$hosts" --rate 400mbit -- \
    --ops allreduce -b 256K -e 8M -w 2 -n 5 --trials 3 --in-place no -c 0 --progress never \
    -J "$out/h$hosts.json" >"$WORK/run$hosts.log" 2>&1 || { cat "$WORK/run$hosts.log"; fail "sweep on $hosts hosts"; }
  py "d = json.load(open('$out/h$hosts.json')); assert d['system']['nodes'] == $hosts, d['system']" ||
    fail "h$hosts.json does not record $hosts nodes"
done
"$CCBENCH" model fit "$out/h2.json" "$out/h3.json" -o "$out/model.json" || fail "model fit"
python3 - "$CCBENCH" "$out" <<'PY' || fail "4-host prediction"
import json, math, statistics, subprocess, sys
ccbench, out = sys.argv[1], sys.argv[2]
rows = json.load(open(f"{out}/h4.json"))["results"]
bad = 0
errors = []
for size in (1 << 20, 2 << 20, 4 << 20, 8 << 20):
    measured = statistics.median(r["time_us"]["median"] for r in rows if r["bytes"] == size)
    p = json.loads(subprocess.run([ccbench, "model", "predict", f"{out}/model.json", "--op", "allreduce",
                                   "--bytes", str(size), "--nodes", "4", "--format", "json"],
                                  check=True, capture_output=True, text=True).stdout)
    err = p["time_us"] / measured - 1
    errors.append(abs(err))
    inside = p["time_lo_us"] <= measured <= p["time_hi_us"]
    print(f"4 hosts, {size >> 20} MiB: measured {measured / 1e3:.1f} ms, predicted {p['time_us'] / 1e3:.1f} ms "
          f"[{p['time_lo_us'] / 1e3:.1f}, {p['time_hi_us'] / 1e3:.1f}] error {100 * err:+.1f}% "
          f"{'inside' if inside else 'OUTSIDE'} the band, extrapolated={p['extrapolated']}")
    bad += 0 if inside and p["extrapolated"] else 1
print(f"mean absolute error {100 * sum(errors) / len(errors):.1f}%, max {100 * max(errors):.1f}%")
sys.exit(1 if bad else 0)
PY
ok "4-host allreduce predicted from 2 and 3 hosts inside the 90% band"
