#!/usr/bin/env bash
# storage.sh's own promises (issue 27 items 14 and 17), on a set of tiers of this run alone:
#   - a bad profile (size 0, a size beyond the free space, an xfs below mkfs.xfs's 300M,
#     write_bps or read_bps 0) is exit 2, one line naming the file and the key; nothing is made
#     (no state, image, mount folder or cgroup);
#   - `up --profile A` then `up --profile B` replaces A (unmounted, its image and cgroup gone);
#   - an up that fails after the checks (here a mount point that is a user's file) is exit 1 in one
#     line and removes the tiers it made, the user's file untouched;
#   - `exec NAME -- mpirun` runs as root without the root flags;
#   - `down` removes the folders up made.
# Needs root, losetup, the blkio cgroup v1 controller and mpirun (else exit 77). About 5 s.
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
storage=$root/scripts/emulate/storage.sh
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[[ $(id -u) == 0 ]] || skip "needs root (loop devices, mounts, the blkio cgroup)"
[[ -d /sys/fs/cgroup/blkio ]] || skip "no blkio cgroup v1 controller"
command -v losetup >/dev/null && [[ -e /dev/loop-control ]] || skip "no losetup or /dev/loop-control"
command -v mpirun >/dev/null || skip "no mpirun"
unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
work=$(mktemp -d /tmp/ccb-storage-sh.XXXXXX)
tag=sh-$$
export CCB_STORAGE_STATE=/run/ccbench-storage-$tag CCB_STORAGE_IMAGES=/var/tmp/ccb-storage-$tag
export CCB_STORAGE_MOUNTS=/mnt/ccb-storage-$tag CCB_STORAGE_CGROUP_PREFIX=ccb-storage-$tag
cgroups() { compgen -G "/sys/fs/cgroup/blkio/$CCB_STORAGE_CGROUP_PREFIX-*" || true; }
cleanup() {
  "$storage" down >/dev/null 2>&1
  rm -f "$CCB_STORAGE_MOUNTS/t-b"
  rmdir "$CCB_STORAGE_MOUNTS" "$CCB_STORAGE_IMAGES" "$CCB_STORAGE_STATE" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
nothing_made() {  # WHAT
  local d
  for d in "$CCB_STORAGE_STATE" "$CCB_STORAGE_IMAGES" "$CCB_STORAGE_MOUNTS"; do
    [[ ! -e $d ]] || fail "$1: $d is left: $(ls -A "$d" | paste -sd' ')"
  done
  [[ -z $(cgroups) ]] || fail "$1: cgroups left: $(cgroups)"
}
profile() {  # NAME FS SIZE WRITE_BPS READ_BPS -> path
  printf 'name: %s\nfs: %s\nsize: %s\nwrite_bps: %s\nread_bps: %s\ntier: t\ntier_gbps: 0.1,0.1\n' "$@" >"$work/$1-$3-$4-$5.yaml"
  echo "$work/$1-$3-$4-$5.yaml"
}
expect_2() {  # KEY PROFILE
  local out rc
  out=$(timeout 60 "$storage" up --profile "$2" 2>&1)
  rc=$?
  [[ $rc == 2 && $(wc -l <<<"$out") == 1 && $out == *"$2: $1:"* ]] ||
    fail "up --profile $(basename "$2"): exit $rc, '$out' (want exit 2, one line naming $2 and $1)"
  nothing_made "after $(basename "$2")"
  echo "ok: $out"
}
expect_2 size "$(profile t-a ext4 0 24M 24M)"
expect_2 size "$(profile t-a ext4 99999999G 24M 24M)"
expect_2 size "$(profile t-a xfs 100M 24M 24M)"
expect_2 write_bps "$(profile t-a ext4 16M 0 24M)"
expect_2 read_bps "$(profile t-a ext4 16M 24M 0)"

a=$(profile t-a ext4 16M 400M 400M) b=$(profile t-b ext4 16M 400M 400M)
timeout 60 "$storage" up --profile "$a" >/dev/null 2>&1 || fail "up --profile t-a"
mountpoint -q "$CCB_STORAGE_MOUNTS/t-a" || fail "t-a is not mounted"
timeout 60 "$storage" up --profile "$b" >/dev/null 2>&1 || fail "up --profile t-b"
! mountpoint -q "$CCB_STORAGE_MOUNTS/t-a" || fail "up --profile t-b left t-a mounted"
[[ ! -e $CCB_STORAGE_IMAGES/t-a.img && ! -d /sys/fs/cgroup/blkio/$CCB_STORAGE_CGROUP_PREFIX-t-a ]] ||
  fail "up --profile t-b left t-a's image or cgroup"
[[ $("$storage" status | awk '{print $1}' | paste -sd' ') == t-b ]] || fail "status after the second up: $("$storage" status)"
echo "ok: up --profile t-b replaced t-a"

out=$(timeout 60 "$storage" exec t-b -- mpirun -np 1 true 2>&1)
rc=$?
[[ $rc == 0 ]] || fail "exec t-b -- mpirun -np 1 true as root: exit $rc: $(head -3 <<<"$out")"
echo "ok: exec t-b -- mpirun as root"

# A mount point that is a file of the user's: up fails after t-a is made, and removes it.
timeout 60 "$storage" down >/dev/null 2>&1 || fail "down"
nothing_made "after down"
mkdir -p "$CCB_STORAGE_MOUNTS" && echo mine >"$CCB_STORAGE_MOUNTS/t-b"
out=$(timeout 60 "$storage" up --profile "$a" --profile "$b" 2>&1)
rc=$?
[[ $rc == 1 && $(wc -l <<<"$out") -le 2 && $out == *"storage: error: t-b: mkdir failed"* ]] ||
  fail "up with t-b's mount point a file: exit $rc, '$out' (want exit 1, the failed step named)"
! mountpoint -q "$CCB_STORAGE_MOUNTS/t-a" && [[ ! -e $CCB_STORAGE_IMAGES/t-a.img && ! -e $CCB_STORAGE_STATE/t-a.env ]] ||
  fail "the failed up left t-a behind"
[[ -z $(cgroups) ]] || fail "the failed up left cgroups: $(cgroups)"
[[ $(cat "$CCB_STORAGE_MOUNTS/t-b") == mine ]] || fail "the user's file was touched"
echo "ok: a failed up removed t-a, the file t-b untouched: $(tail -1 <<<"$out")"
echo PASS
