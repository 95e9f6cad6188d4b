#!/bin/bash
# `ccbench checkpoint` on emulated storage tiers with known answers (docs/emulation.md, "Storage
# tiers"; docs/checkpoint.md). Usage: checkpoint.sh known_answer|faults|tiered
#   known_answer: O_DIRECT write and read on emulated-nvme (24/32 MiB/s) and emulated-fsx (12/16 MiB/s),
#                 5 trials each, throughput / limit inside the measured bands; buffered writes with
#                 fsync and reads after drop_caches on emulated-nvme; compare confirms the claim file
#                 "nvme is 2x fsx" (configs/claims/emulated-nvme-vs-fsx.yaml) and refutes it 20% off
#                 (1.6x, 2.4x); --no-fsync far above the limit, flagged and refused by compare.
#   faults:       --no-fsync flagged ("not durable?") and refused by compare against a durable run;
#                 a tier too small (exit 2, nothing written); ENOSPC mid-write (failed trial, partial
#                 step removed, finished trials kept); SIGKILL of a rank and SIGTERM of the launcher
#                 (no committed-looking step); a shard corrupted before a restart read (exit 1).
#   tiered:       --tiered: blocking time at the local tier's rate, durable time at the target's
#                 (emulated-local 24 MiB/s, emulated-fsx 12 MiB/s), drained shards verified.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
storage=$root/scripts/emulate/storage.sh
CCBENCH=${CCBENCH:-$root/build/ccbench}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
MPIRUN=(mpirun --oversubscribe --allow-run-as-root --bind-to none)
PY=/usr/bin/python3

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[[ $(id -u) == 0 ]] || skip "needs root (loop devices, mounts, the blkio cgroup)"
[[ -d /sys/fs/cgroup/blkio ]] || skip "no blkio cgroup v1 controller"
command -v losetup >/dev/null && command -v mkfs.xfs >/dev/null || skip "losetup or mkfs.xfs missing (xfsprogs)"
[[ -e /dev/loop-control ]] || skip "no /dev/loop-control"

work=$(mktemp -d /tmp/ccb-storage-e2e.XXXXXX)
# Tiers of this run alone (state, images, mount points, cgroups), so a run never touches a user's
# tiers or another run's, and `down` on exit (the trap: pass, fail or signal) removes only its own.
tag=e2e-$$
export CCB_STORAGE_STATE=/run/ccbench-storage-$tag CCB_STORAGE_IMAGES=/var/tmp/ccb-storage-$tag
export CCB_STORAGE_MOUNTS=/mnt/ccb-storage-$tag CCB_STORAGE_CGROUP_PREFIX=ccb-storage-$tag
cleanup() {
  "$storage" down >/dev/null 2>&1
  rmdir "$CCB_STORAGE_MOUNTS" "$CCB_STORAGE_IMAGES" "$CCB_STORAGE_STATE" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Bands of throughput / the throttle's limit (docs/emulation.md, "Known answers": measured 5 runs of
# 5 on this 2-core machine beside other builds). O_DIRECT writes and every read after a cache drop:
# direct_lo-direct_hi; buffered writes with fsync (ext4's ordered journal): buffered_lo-direct_hi.
direct_lo=0.80 direct_hi=1.10 buffered_lo=0.45

# ckpt TIER NP ARGS...: mpirun ccbench checkpoint in TIER's blkio cgroup, target on the tier.
ckpt() {
  local tier=$1 np=$2
  shift 2
  "$storage" exec "$tier" -- "${MPIRUN[@]}" -np "$np" "$CCBENCH" checkpoint --target "$("$storage" path "$tier")" \
    --tier "$("$storage" value "$tier" tier)" --tier-gbps "$("$storage" value "$tier" tier_gbps)" "$@"
}

# ratio FILE OP TIER: median over trials of throughput / the tier's limit for OP's direction.
ratio() {
  local key=write_bps
  [[ $2 == checkpoint_read ]] && key=read_bps
  $PY - "$1" "$2" "$("$storage" value "$3" $key)" <<'PYEOF'
import json, statistics, sys
rows = [r for r in json.load(open(sys.argv[1]))["results"] if r["op"] == sys.argv[2]]
print("%.3f" % statistics.median(r["busbw_gbps"] * 1e9 / float(sys.argv[3]) for r in rows))
PYEOF
}

in_band() { $PY -c "import sys; sys.exit(0 if $2 <= $1 <= $3 else 1)"; }

# no_fsync_lie DURABLE_JSON: --no-fsync on emulated-nvme measures the page cache: far above the
# limit, flagged "not durable?" in the table and the JSON, and refused by compare against DURABLE_JSON.
no_fsync_lie() {
  ckpt emulated-nvme 2 --shard-bytes 8M --trials 2 --keep 1 --no-fsync -J "$work/lie.json" >"$work/lie.out" 2>&1 ||
    { cat "$work/lie.out"; fail "--no-fsync run"; }
  grep -E "^ +[0-9]+ write" "$work/lie.out" | head -1
  grep -q "not durable?" "$work/lie.out" || fail "--no-fsync not flagged in the table"
  grep -q '"plausibility": "not durable?' "$work/lie.json" || fail "--no-fsync not flagged in the JSON"
  r=$(ratio "$work/lie.json" checkpoint_write emulated-nvme)
  echo "--no-fsync write: throughput / limit = $r"
  in_band "$r" 2.0 100000 || fail "--no-fsync write only $r x the limit"
  "$CCBENCH" compare "$1" "$work/lie.json" --ops checkpoint_write >"$work/cmp.out" 2>&1
  rc=$?
  [[ $rc == 3 ]] || { cat "$work/cmp.out"; fail "compare durable vs --no-fsync: exit $rc, not 3"; }
  grep -q "durable" "$work/cmp.out" || fail "compare does not name durable"
}

known_answer() {
  "$storage" up --profile emulated-nvme --profile emulated-fsx >/dev/null || fail "storage.sh up"
  local t0=$SECONDS tier op r rc
  for tier in emulated-nvme emulated-fsx; do
    ckpt $tier 2 --shard-bytes 16M --transfer-size 4M --direct --trials 5 --keep 1 -J "$work/$tier.json" \
      >"$work/$tier.out" 2>&1 || { cat "$work/$tier.out"; fail "$tier: ccbench checkpoint failed"; }
  done
  for tier in emulated-nvme emulated-fsx; do
    for op in checkpoint_write checkpoint_read; do
      r=$(ratio "$work/$tier.json" $op $tier)
      echo "$tier $op (O_DIRECT): throughput / limit = $r (band $direct_lo-$direct_hi)"
      in_band "$r" $direct_lo $direct_hi || fail "$tier $op: ratio $r outside $direct_lo-$direct_hi"
    done
  done
  grep -q '"cache_drop": "o_direct"' "$work/emulated-nvme.json" || fail "O_DIRECT reads not recorded as o_direct"
  # Buffered writes with fsync, reads after drop_caches (root).
  ckpt emulated-nvme 2 --shard-bytes 16M --transfer-size 4M --trials 2 --keep 1 -J "$work/buffered.json" \
    >"$work/buffered.out" 2>&1 || { cat "$work/buffered.out"; fail "buffered run failed"; }
  r=$(ratio "$work/buffered.json" checkpoint_write emulated-nvme)
  echo "emulated-nvme checkpoint_write (buffered + fsync): throughput / limit = $r (band $buffered_lo-$direct_hi)"
  in_band "$r" $buffered_lo $direct_hi || fail "buffered write: ratio $r outside $buffered_lo-$direct_hi"
  r=$(ratio "$work/buffered.json" checkpoint_read emulated-nvme)
  echo "emulated-nvme checkpoint_read (after drop_caches): throughput / limit = $r (band $direct_lo-$direct_hi)"
  in_band "$r" $direct_lo $direct_hi || fail "buffered read: ratio $r outside $direct_lo-$direct_hi"
  grep -q '"cache_drop": "drop_caches"' "$work/buffered.json" || fail "buffered reads not after drop_caches"
  # The known ratio, nvme 2x fsx (write, O_DIRECT, 5 trials a side): the claim file is confirmed;
  # the same claim 20% off either way (1.6x, 2.4x) is refuted.
  local claim=$root/configs/claims/emulated-nvme-vs-fsx.yaml
  $PY - "$work/emulated-fsx.json" "$work/emulated-nvme.json" <<'PYEOF'
import json, statistics, sys
m = [statistics.median(r["busbw_gbps"] for r in json.load(open(f))["results"] if r["op"] == "checkpoint_write")
     for f in sys.argv[1:]]
print("nvme / fsx write throughput (medians): %.3f" % (m[1] / m[0]))
PYEOF
  # 5 trials a side fixed in advance and asked once: the single-look rule (docs/compare.md "Asking again").
  "$CCBENCH" compare "$work/emulated-fsx.json" "$work/emulated-nvme.json" --claim "$claim" --looks once \
    >"$work/claim.out" 2>&1
  rc=$?
  echo "claim 2.0x: $(grep '^verdict' "$work/claim.out")"
  [[ $rc == 0 ]] && grep -q "^verdict: confirmed" "$work/claim.out" || { cat "$work/claim.out"; fail "claim 2.0x not confirmed (exit $rc)"; }
  local off
  for off in 60%:1.6x 140%:2.4x; do
    sed "s/^expected_speedup: .*/expected_speedup: ${off%%:*}/" "$claim" >"$work/claim-${off#*:}.yaml"
    "$CCBENCH" compare "$work/emulated-fsx.json" "$work/emulated-nvme.json" --claim "$work/claim-${off#*:}.yaml" \
      --looks once >"$work/claim-off.out" 2>&1
    rc=$?
    echo "claim ${off#*:}: $(grep '^verdict' "$work/claim-off.out")"
    [[ $rc == 1 ]] && grep -q "^verdict: refuted" "$work/claim-off.out" ||
      { cat "$work/claim-off.out"; fail "claim ${off#*:} (20% off) not refuted (exit $rc)"; }
  done
  no_fsync_lie "$work/buffered.json"
  echo "known answer: $((SECONDS - t0)) s"
}

# Every step-* directory has its manifest and full shards; anything else is a named partial.
nothing_half_committed() {
  $PY - "$1" <<'PYEOF' || fail "a step directory looks committed but is not: $(ls -a "$1")"
import json, os, re, sys
t = sys.argv[1]
for n in os.listdir(t):
    p = os.path.join(t, n)
    if n.startswith("step-"):
        m = json.load(open(os.path.join(p, "ccbench-manifest.json")))
        for s in m["shards"]:
            assert os.path.getsize(os.path.join(p, "rank-%05d.shard" % s["writer"])) == s["bytes"], n
    elif n != "lost+found":
        assert re.match(r"^\.step-\d{6}\.partial-\d+$", n), n
PYEOF
}

faults() {
  "$storage" up --profile emulated-nvme --profile emulated-small >/dev/null || fail "storage.sh up"
  local t0=$SECONDS nvme small
  nvme=$("$storage" path emulated-nvme) small=$("$storage" path emulated-small)
  # --no-fsync: far above the limit, flagged, and compare refuses it against a durable run.
  ckpt emulated-nvme 2 --shard-bytes 8M --trials 2 --keep 1 -J "$work/durable.json" >"$work/d.out" 2>&1 || fail "durable run"
  no_fsync_lie "$work/durable.json"
  # A tier too small: exit 2, nothing written.
  ckpt emulated-small 2 --shard-bytes 32M -J "$work/small.json" >"$work/small.out" 2>&1
  rc=$?
  [[ $rc == 2 ]] || fail "tier too small: exit $rc"
  grep -q "(nothing written)" "$work/small.out" || fail "tier too small: no message"
  [[ -z $(ls -A "$small" | grep -v lost+found) && ! -e $work/small.json ]] || fail "tier too small: something written"
  # ENOSPC mid-write: trial 0 (24 MiB) fits, trial 1 fills the tier.
  ckpt emulated-small 2 --shard-bytes 12M -J "$work/enospc.json" --trials 3 --keep 3 >"$work/enospc.out" 2>&1
  rc=$?
  [[ $rc == 2 ]] || { cat "$work/enospc.out"; fail "ENOSPC: exit $rc"; }
  grep -q "trial 1 failed, its partial step .* removed: .*(ENOSPC)" "$work/enospc.out" || fail "ENOSPC: message"
  $PY -c "import json,sys; f=json.load(open('$work/enospc.json')); assert f['run']['status']=='failed'; assert {r['trial'] for r in f['results']}=={0}" ||
    fail "ENOSPC: finished trial not kept"
  [[ $(ls -A "$small" | grep -v lost+found) == step-000001 ]] || fail "ENOSPC: left $(ls -A "$small")"
  # SIGTERM of the launcher in the middle of a throttled write.
  rm -rf "${nvme:?}"/step-* "$nvme"/.step-*
  "$storage" exec emulated-nvme -- setsid "${MPIRUN[@]}" -np 2 "$CCBENCH" checkpoint --target "$nvme" --shard-bytes 8M \
    --trials 50 --keep 2 --label e2e-term -J "$work/term.json" >"$work/term.out" 2>&1 &
  pid=$!
  for _ in $(seq 200); do [[ -f $work/term.jsonl && $(wc -l <"$work/term.jsonl") -ge 3 ]] && break; sleep 0.1; done
  sleep 0.3
  kill -TERM -- -$pid 2>/dev/null || kill -TERM $pid
  wait $pid
  $PY -c "import json; f=json.load(open('$work/term.json')); assert f['run']['status']=='interrupted', f['run']; assert len(f['results'])>=3" ||
    fail "SIGTERM: finished trials not kept"
  nothing_half_committed "$nvme"
  # SIGKILL of rank 1 in the middle of a throttled write.
  "$storage" exec emulated-nvme -- setsid "${MPIRUN[@]}" -np 2 "$CCBENCH" checkpoint --target "$nvme" --shard-bytes 8M \
    --trials 50 --keep 2 -T 20 --label e2e-kill -J "$work/kill.json" >"$work/kill.out" 2>&1 &
  pid=$!
  for _ in $(seq 200); do [[ -f $work/kill.jsonl && $(wc -l <"$work/kill.jsonl") -ge 3 ]] && break; sleep 0.1; done
  sleep 0.3
  victim=$(grep -l "e2e-kill" /proc/[0-9]*/cmdline 2>/dev/null | while read -r c; do
    p=${c#/proc/}; p=${p%/cmdline}
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" && echo "$p"; done | head -1)
  [[ -n $victim ]] || fail "SIGKILL: rank 1 not found"
  kill -KILL "$victim"
  wait $pid
  rc=$?
  [[ $rc != 0 ]] || fail "SIGKILL: exit 0"
  $PY -c "import json; f=json.load(open('$work/kill.json')); assert f['run']['status']!='complete'; assert len(f['results'])>=3" ||
    fail "SIGKILL: finished trials not kept"
  nothing_half_committed "$nvme"
  # A shard corrupted on disk between write and read: exit 1 naming rank, file and offset.
  rm -rf "${nvme:?}"/step-* "$nvme"/.step-*
  ckpt emulated-nvme 2 --shard-bytes 4M --phases write --keep 1 >/dev/null 2>&1 || fail "write before corruption"
  printf '\xff\xff\xff\xff' | dd of="$nvme/step-000001/rank-00000.shard" bs=1 seek=1048576 conv=notrunc status=none
  ckpt emulated-nvme 2 --shard-bytes 4M --phases read -J "$work/corrupt.json" >"$work/corrupt.out" 2>&1
  rc=$?
  [[ $rc == 1 ]] || { cat "$work/corrupt.out"; fail "corrupted shard: exit $rc"; }
  grep -q "rank 0: $nvme/step-000001/rank-00000.shard at offset 104857[6-9]: the shard read back wrong" "$work/corrupt.out" ||
    { cat "$work/corrupt.out"; fail "corrupted shard: message"; }
  echo "faults: $((SECONDS - t0)) s"
}

# --tiered (docs/checkpoint.md, "Tiered checkpoints"): shards written to emulated-local (24 MiB/s
# write) and drained to emulated-fsx (12 MiB/s), both throttles in one cgroup (storage.sh exec
# A,B). The blocking time is the local tier's: bytes / blocking within direct_lo-direct_hi of 24 MiB/s;
# the durable time the target's: the drain, from the first rank's local copy done to the last
# target copy committed, within the same band of 12 MiB/s. The drained shards read back verified.
tiered() {
  local t0=$SECONDS
  "$storage" up --profile emulated-local --profile emulated-fsx >/dev/null || fail "storage.sh up"
  local lo fsx
  lo=$("$storage" path emulated-local) fsx=$("$storage" path emulated-fsx)
  "$storage" exec emulated-local,emulated-fsx -- "${MPIRUN[@]}" -np 2 "$CCBENCH" checkpoint --target "$fsx" \
    --tiered "$lo" --shard-bytes 16M --direct --trials 3 --keep 1 -J "$work/tiered.json" >"$work/tiered.out" 2>&1 ||
    { cat "$work/tiered.out"; fail "tiered run"; }
  grep -E "^ +[0-9]+ write|tiered:" "$work/tiered.out"
  $PY - "$work/tiered.json" "$("$storage" value emulated-local write_bps)" "$("$storage" value emulated-fsx write_bps)" \
    "$direct_lo" "$direct_hi" <<'PYEOF' || fail "tiered: outside the bands"
import json, sys
doc = json.load(open(sys.argv[1]))
local_bps, target_bps, lo, hi = (float(x) for x in sys.argv[2:])
bad = 0
for r in doc["results"]:
    if r["op"] == "checkpoint_read" and r["wrong"] != 0:
        print("drained shard read back wrong"); bad += 1
    if r["op"] != "checkpoint_write":
        continue
    c = r["checkpoint"]
    blocking_s, durable_s = r["blocking_us"] / 1e6, r["durable_us"] / 1e6
    first_local = min(p["local_end_s"] for p in c["tiered"]["per_rank"])
    first_start = min(p["start_s"] for p in c["per_rank"])
    b = r["bytes"] / blocking_s / local_bps
    d = r["bytes"] / (durable_s + first_start - first_local) / target_bps
    print("trial %d: blocking %.3f s = %.3f of the local tier's rate, durable %.3f s: drain %.3f of the target's"
          % (r["trial"], blocking_s, b, durable_s, d))
    bad += (not (lo <= b <= hi)) + (not (lo <= d <= hi))
sys.exit(1 if bad else 0)
PYEOF
  echo "tiered: $((SECONDS - t0)) s"
}

case ${1:-} in
  known_answer) known_answer ;;
  faults) faults ;;
  tiered) tiered ;;
  *) echo "usage: checkpoint.sh known_answer|faults|tiered" >&2; exit 2 ;;
esac
echo PASS
