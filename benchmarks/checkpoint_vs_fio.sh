#!/usr/bin/env bash
# ccbench checkpoint against fio (Debian's fio 3.33) on the same target with equivalent options,
# interleaved round by round so both see the same machine: rw=write, bs = --transfer-size,
# numjobs = ranks, size = --shard-bytes, one file per job, end_fsync=1 (buffered; fio's end_fsync is
# inside its timed loop) or direct=1 (--direct), group_reporting, fallocate=none (fio otherwise
# preallocates its files before the timed loop: twice ccbench's throughput on tmpfs, where a
# checkpoint pays for its fresh files' pages). Prints each side's median GB/s
# and the ratio ccbench / fio per target and mode (1.0 = the same throughput; ccbench's number also
# holds the commit: manifest, rename, directory fsyncs).
#   benchmarks/checkpoint_vs_fio.sh [build-dir]     ROUNDS=5 RANKS=2 SHARD=16M TRANSFER=4M
# Targets: tmpfs (/dev/shm), the plain disk (/var/tmp), and, as root, the emulated-nvme tier
# (scripts/emulate/storage.sh, brought up and down here) with the run in its blkio cgroup.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
rounds=${ROUNDS:-5} ranks=${RANKS:-2} shard=${SHARD:-16M} transfer=${TRANSFER:-4M}
command -v fio >/dev/null || { echo "fio missing: apt-get install fio" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
storage=$root/scripts/emulate/storage.sh
# The benchmark's own tiers (state, images, mounts, cgroups): never a user's or a test's.
tag=fio-bench-$$
export CCB_STORAGE_STATE=/run/ccbench-storage-$tag CCB_STORAGE_IMAGES=/var/tmp/ccb-storage-$tag
export CCB_STORAGE_MOUNTS=/mnt/ccb-storage-$tag CCB_STORAGE_CGROUP_PREFIX=ccb-storage-$tag
work=$(mktemp -d /tmp/ccb-fio-bench.XXXXXX)
shm=$(mktemp -d /dev/shm/ccb-fio-bench.XXXXXX) disk=$(mktemp -d /var/tmp/ccb-fio-bench.XXXXXX)
tiers=0
cleanup() {
  rm -rf "$work" "$shm" "$disk"
  if [[ $tiers == 1 ]]; then
    "$storage" down
    rmdir "$CCB_STORAGE_MOUNTS" "$CCB_STORAGE_IMAGES" "$CCB_STORAGE_STATE" 2>/dev/null
  fi
  true
}
trap cleanup EXIT

targets=("tmpfs:$shm" "disk:$disk")
if [[ $(id -u) == 0 && -d /sys/fs/cgroup/blkio ]] && command -v mkfs.xfs >/dev/null; then
  "$storage" up --profile emulated-nvme >/dev/null && tiers=1
  mkdir -p "$("$storage" path emulated-nvme)/bench"
  targets+=("emulated-nvme:$("$storage" path emulated-nvme)/bench")
fi

# in_tier NAME CMD...: run CMD in the tier's blkio cgroup (or as is for the unthrottled targets).
in_tier() {
  local name=$1
  shift
  if [[ $name == emulated-* ]]; then "$storage" exec "$name" -- "$@"; else "$@"; fi
}

gbps_ccbench() {  # median over the file's checkpoint_write rows
  /usr/bin/python3 -c "import json,sys; r=[x for x in json.load(open(sys.argv[1]))['results'] if x['op']=='checkpoint_write']; print(r[0]['busbw_gbps'])" "$1"
}
gbps_fio() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['jobs'][0]['write']['bw_bytes']/1e9)" "$1"; }

results=$work/results.txt
for ((round = 0; round < rounds; round++)); do
  for entry in "${targets[@]}"; do
    name=${entry%%:*} dir=${entry#*:}
    for mode in fsync direct; do
      [[ $name == tmpfs && $mode == direct ]] && continue  # tmpfs refuses O_DIRECT
      ccb_flags=() fio_flags=(--end_fsync=1)
      [[ $mode == direct ]] && ccb_flags=(--direct) fio_flags=(--direct=1)
      # Alternate which side goes first, so neither always finds a warmer machine.
      order=(ccbench fio)
      ((round % 2 == 1)) && order=(fio ccbench)
      for side in "${order[@]}"; do
        rm -rf "${dir:?}"/* "$dir"/.step-*
        if [[ $side == ccbench ]]; then
          in_tier "$name" mpirun --oversubscribe --allow-run-as-root --bind-to none -np "$ranks" "$build/ccbench" checkpoint \
            --target "$dir" --shard-bytes "$shard" --transfer-size "$transfer" --phases write "${ccb_flags[@]}" \
            -J "$work/c.json" >/dev/null
          echo "$name $mode ccbench $(gbps_ccbench "$work/c.json")" >>"$results"
        else
          in_tier "$name" nice -n 0 fio --name=ckpt --directory="$dir" --rw=write --bs="$transfer" --numjobs="$ranks" \
            --size="$shard" --ioengine=psync --fallocate=none --group_reporting --output-format=json "${fio_flags[@]}" \
            --output="$work/f.json" >/dev/null
          echo "$name $mode fio $(gbps_fio "$work/f.json")" >>"$results"
        fi
      done
    done
  done
done
/usr/bin/python3 - "$results" "$rounds" "$ranks" "$shard" "$transfer" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, mode, side, gbps = line.split()
    runs[(name, mode, side)].append(float(gbps))
print(f"# ccbench checkpoint vs fio {sys.argv[2]} rounds, {sys.argv[3]} ranks/jobs x {sys.argv[4]}, transfer {sys.argv[5]}")
print(f"{'target':<15} {'mode':<8} {'ccbench GB/s':>13} {'fio GB/s':>10} {'ratio':>7}  ratios per round")
for (name, mode, side) in sorted(k for k in runs if k[2] == "ccbench"):
    c, f = runs[(name, mode, "ccbench")], runs[(name, mode, "fio")]
    ratios = [a / b for a, b in zip(c, f)]
    print(f"{name:<15} {mode:<8} {statistics.median(c):>13.4f} {statistics.median(f):>10.4f} "
          f"{statistics.median(ratios):>7.3f}  {' '.join('%.2f' % r for r in ratios)}")
PY
