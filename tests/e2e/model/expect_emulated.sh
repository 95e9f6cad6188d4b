#!/bin/bash
# Is my number normal? The known answer on the emulated fabric (docs/model.md, "Known answers"):
# an expectation fitted on 5 launches of allreduce over 2 hosts x 1 rank at 400 Mbit/s, 1-8 MiB;
# 10 new launches on the same fabric, interleaved with those 5, must be normal in at least 95% of
# their rows, and 5 launches after the links drop to 280 Mbit/s (the same run, the same label: a
# degraded fabric the run does not know about) below in at least 90% of their rows of 1 MiB and up. Prints the rates,
# the band and every row that is not what the test expects (docs/model.md quotes them).
#   CCB_EXPECT_KEEP=DIR keeps the launches, the model and the verdicts there.
#   CCB_EXPECT_NEW=N, CCB_EXPECT_SLOW=N change the launch counts (10, 5).
# Not in CI (skipped, 77, unless CCB_EXPECT_EMULATED=1): beside a second 2-core load 35 of 40 rows
# of the same fabric were normal (87.5%, 95% needed). 5 launches give a band of +-3.3% and the load
# slowed launches by up to 9.8%, so this known answer has not passed 5 runs of 5 beside a build
# (docs/model.md, "Known answers").
if [[ ${CCB_EXPECT_EMULATED:-0} != 1 ]]; then
  echo "SKIP: set CCB_EXPECT_EMULATED=1 (a known answer that does not yet hold beside other load)"
  exit 77
fi
source "$(dirname "$0")/../emulate/common.sh"
out=${CCB_EXPECT_KEEP:-$WORK}
new=${CCB_EXPECT_NEW:-10}
slow=${CCB_EXPECT_SLOW:-5}
mkdir -p "$out"/{fit,new,slow}
fabric=$ROOT/scripts/emulate/fabric.sh
# The steady setup docs/emulation.md measured for migrate.sh: a 256 KiB token bucket (with lib.sh's
# 32 KiB an 8 MiB allreduce varied 1.5-2.6% between samples, with 256 KiB 0.1%) and `fabric.sh
# exec`'s allreduce pinned to reduce then broadcast (every sample 2S/R + c; Open MPI's own choice for
# 2 ranks overlaps the two directions in some iterations and not others: 8 MiB samples of 178 and
# 270 ms in one launch here, a mode as far apart as the 400 and 280 Mbit/s links).
export CCB_EMU_BURST=${CCB_EMU_BURST:-256kb}
"$fabric" up --hosts 2 --rate 400mbit >"$WORK/up.log" 2>&1 || { cat "$WORK/up.log"; fail "fabric up"; }
# The metadata `fabric.sh run` gives a 400 Mbit/s fabric; kept on the slowed links, so the runs
# there are the same profile (emulated-400mbit) to the judge, as a degraded fabric is to its user.
run_args=(--ops allreduce -b 1M -e 8M -w 1 -n 5 --trials 1 --in-place no -c 0 --progress never
  --fabric-path tcp --link-gbps 0.4 --label emulated-400mbit)
launch() {  # FILE: one launch
  "$fabric" exec -- mpirun -np 2 --host "$P-h0:1,$P-h1:1" "$CCBENCH" run "${run_args[@]}" -J "$1" \
    >"$WORK/launch.log" 2>&1 || { cat "$WORK/launch.log"; fail "launch $1"; }
}
# The expectation's 5 launches and the 10 new ones interleave (F N N F N N ...), so the fit sees
# the machine as the new launches do. Run one after the other, the load of other jobs on this
# shared 2-core machine changed between them and the test failed either way: 5 launches fitted
# while a build ran, 10 after it ended, were 6 rows "above" of 40; 5 fitted in a quiet minute (a
# band of +-3.3%) against 10 beside other work, 11 rows "below" (docs/model.md). A team's own
# expectation has the same need: launches spread over the conditions it will be judged in.
start=$SECONDS
f=0 n=0
for ((i = 0; i < 5 + new; i++)); do
  if ((i % 3 == 0 && f < 5)) || ((n == new)); then
    f=$((f + 1))
    launch "$(printf '%s/fit/launch-%03d.json' "$out" "$f")"
  else
    n=$((n + 1))
    launch "$(printf '%s/new/launch-%03d.json' "$out" "$n")"
  fi
done
"$CCBENCH" model fit "$out/fit" -o "$out/model.json" || fail "model fit"
"$fabric" set-rate 280mbit || fail "set-rate 280mbit"
for ((i = 1; i <= slow; i++)); do launch "$(printf '%s/slow/launch-%03d.json' "$out" "$i")"; done
echo "launches and fit: $((SECONDS - start)) s"
rc_new=0 rc_slow=0
"$CCBENCH" model check "$out/model.json" "$out/new" --format json -o "$out/new-judged" >"$out/new.json" || rc_new=$?
"$CCBENCH" model check "$out/model.json" "$out/slow" --format json -o "$out/slow-judged" >"$out/slow.json" || rc_slow=$?
echo "model check exit codes: same fabric $rc_new, 280 Mbit/s $rc_slow"
python3 - "$out" <<'PY' || fail "the known answer"
import json, sys
out = sys.argv[1]
ok = True
def rows(name):
    return [(f["file"], r) for f in json.load(open(f"{out}/{name}.json"))["files"] for r in f["rows"]]
same = rows("new")
normal = sum(r["expected"]["verdict"] == "normal" for _, r in same)
print(f"same fabric (400 Mbit/s): {normal} of {len(same)} rows normal ({100 * normal / len(same):.1f}%; need 95%)")
for f, r in same:
    e = r["expected"]
    if e["verdict"] != "normal":
        print(f"  {f.rsplit('/', 1)[-1]} {r['bytes'] >> 20} MiB: {e['verdict']}, shortfall {e.get('shortfall_pct', 0):+.1f}% "
              f"{e.get('reason', '')}")
ok = ok and normal >= 0.95 * len(same)
slow = [(f, r) for f, r in rows("slow") if r["bytes"] >= 1 << 20]
below = sum(r["expected"]["verdict"] == "below" for _, r in slow)
print(f"280 Mbit/s: {below} of {len(slow)} rows of 1 MiB and up below ({100 * below / len(slow):.1f}%; need 90%)")
for f, r in slow:
    e = r["expected"]
    if e["verdict"] != "below":
        print(f"  {f.rsplit('/', 1)[-1]} {r['bytes'] >> 20} MiB: {e['verdict']}, shortfall {e.get('shortfall_pct', 0):+.1f}%")
ok = ok and below >= 0.9 * len(slow)
# The band per size (the same for every launch) and the shortfalls seen, for docs/model.md.
for size in sorted({r["bytes"] for _, r in same}):
    judged = [r["expected"] for _, r in same if r["bytes"] == size and "lo" in r["expected"]]
    if not judged:
        continue
    e = judged[0]
    unit = "us" if e["metric"] == "time_us" else "GB/s"
    lo, hi, pred = e["lo"], e["hi"], e["predicted"]
    short = [x["shortfall_pct"] for x in judged]
    slow_short = [r["expected"]["shortfall_pct"] for _, r in slow if r["bytes"] == size and "lo" in r["expected"]]
    print(f"  {size >> 20} MiB: 99% band [{lo:.4g}, {hi:.4g}] {unit}, predicted {pred:.4g} "
          f"(-{100 * (1 - lo / pred):.1f}% / +{100 * (hi / pred - 1):.1f}%); shortfall at 400 Mbit/s "
          f"{min(short):+.1f}..{max(short):+.1f}%"
          + (f", at 280 Mbit/s {min(slow_short):+.1f}..{max(slow_short):+.1f}%" if slow_short else ""))
sys.exit(0 if ok else 1)
PY
ok "fitted on 5 launches: the same fabric normal, the slowed links below"
