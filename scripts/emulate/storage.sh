#!/bin/bash
# Emulated storage tiers with known answers (docs/emulation.md, "Storage tiers"): a loop-device
# filesystem per profile (configs/storage/emulated-*.yaml: ext4 or xfs, its size), mounted at
# /mnt/ccb-storage/NAME and throttled by the blkio controller of cgroup v1
# (blkio.throttle.write_bps_device / read_bps_device on the loop device's major:minor) in the
# cgroup /sys/fs/cgroup/blkio/ccb-storage-NAME (paths and prefix settable: usage). `exec` runs a
# command in that cgroup, where the throttle applies to what it submits (O_DIRECT, and buffered
# pages its own fsync writes back).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
state=${CCB_STORAGE_STATE:-/run/ccbench-storage}
images=${CCB_STORAGE_IMAGES:-/var/tmp/ccb-storage}
mounts=${CCB_STORAGE_MOUNTS:-/mnt/ccb-storage}
blkio=/sys/fs/cgroup/blkio
# Everything a set of tiers owns is keyed by these four, so two users (or a test beside a user) with
# their own values never touch each other's tiers: state, images, mount points and cgroup names.
# Loop devices are taken with `losetup --find` and recorded in the state, never guessed.
cgroup_prefix=${CCB_STORAGE_CGROUP_PREFIX:-ccb-storage}
[[ $cgroup_prefix =~ ^[A-Za-z0-9_-]+$ ]] || { echo "storage: error: CCB_STORAGE_CGROUP_PREFIX: expected [A-Za-z0-9_-]+" >&2; exit 2; }

usage() {
  cat <<'USAGE'
usage: scripts/emulate/storage.sh COMMAND [ARGS]
  up [--profile NAME|FILE]...   make the tiers (default: emulated-nvme and emulated-fsx); replaces every
                                old tier of this set (the same CCB_STORAGE_* below). Every profile is
                                checked first (exit 2 naming the file and key; nothing made or removed);
                                a step that fails later (exit 1) removes the tiers this up made
  down                          unmount, detach the loop devices, remove the cgroups, images and the
                                folders up made (when empty)
  status                        each tier: mount, device, limits, bytes the throttle saw
  path NAME                     the tier's mount point
  exec NAME -- CMD...           run CMD in the tier's blkio cgroup (e.g. mpirun ... ccbench checkpoint);
                                as root with OMPI_ALLOW_RUN_AS_ROOT=1 and ..._CONFIRM=1, so a plain mpirun starts
  exec NAME1,NAME2 -- CMD...    the same in one cgroup holding both tiers' limits (--tiered)
  drop NAME                     sync and drop the page cache (root)
Profiles: configs/storage/emulated-nvme.yaml, emulated-fsx.yaml, emulated-small.yaml (flat key: value).
A bad profile (unknown key, bad value) is one line naming the file and key, exit 2: size at least
8M (ext4) or 300M (xfs, mkfs.xfs's floor) and no more than the images folder's free space;
write_bps and read_bps above 0 (0 is blkio's "no limit").
Environment (each set of tiers its own): CCB_STORAGE_STATE (/run/ccbench-storage),
CCB_STORAGE_IMAGES (/var/tmp/ccb-storage), CCB_STORAGE_MOUNTS (/mnt/ccb-storage),
CCB_STORAGE_CGROUP_PREFIX (ccb-storage: the blkio cgroup is PREFIX-NAME).
USAGE
}

die() { printf 'storage: error: %s\n' "$*" >&2; exit 2; }
log() { printf 'storage: %s\n' "$*" >&2; }

profile_path() {
  local p=$1
  if [[ -f $p ]]; then echo "$p"; return; fi
  [[ -f $root/configs/storage/$p.yaml ]] || die "--profile $p: no such profile (configs/storage/$p.yaml)"
  echo "$root/configs/storage/$p.yaml"
}

# The value of KEY in a flat profile ("" when absent).
profile_value() { sed -n "s/^$2:[[:space:]]*\([^#]*\).*/\1/p" "$1" | sed 's/[[:space:]]*$//' | head -1; }

to_bytes() {  # 40M -> 41943040 (K/M/G = 1024^n)
  local v=$1 n unit
  [[ $v =~ ^([0-9]{1,12})([KMG]?)$ ]] || return 1
  n=$((10#${BASH_REMATCH[1]})) unit=${BASH_REMATCH[2]}
  [[ $unit != G || $n -le 999999999 ]] || return 1 # within 2^63 after the shift
  case $unit in K) n=$((n << 10)) ;; M) n=$((n << 20)) ;; G) n=$((n << 30)) ;; esac
  echo "$n"
}

check_profile() {
  local f=$1 line key
  while IFS= read -r line; do
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    key=${line%%:*}
    case $key in name | fs | size | write_bps | read_bps | tier | tier_gbps) ;;
      *) die "$f: unknown key '$key' (name, fs, size, write_bps, read_bps, tier, tier_gbps)" ;;
    esac
  done <"$f"
  [[ $(profile_value "$f" name) =~ ^[a-z0-9-]+$ ]] || die "$f: name: expected [a-z0-9-]+"
  case $(profile_value "$f" fs) in ext4 | xfs) ;; *) die "$f: fs: expected ext4 or xfs" ;; esac
  local k
  for k in size write_bps read_bps; do
    to_bytes "$(profile_value "$f" $k)" >/dev/null || die "$f: $k: expected a byte count like 40M"
  done
  for k in write_bps read_bps; do
    (($(to_bytes "$(profile_value "$f" $k)") > 0)) || die "$f: $k: 0 is no limit at all to blkio; expected a rate like 24M"
  done
  local size min
  size=$(to_bytes "$(profile_value "$f" size)")
  if [[ $(profile_value "$f" fs) == xfs ]]; then min=$((300 << 20)); else min=$((8 << 20)); fi
  ((size >= min)) || die "$f: size: $(profile_value "$f" size) is below $((min >> 20))M, the least for $(profile_value "$f" fs)"
}

# free_bytes DIR: bytes free on the file system that holds DIR (or its nearest existing parent).
free_bytes() {
  local d=$1
  until [[ -d $d ]]; do d=$(dirname "$d"); done
  df -B1 --output=avail "$d" | tail -1 | tr -d ' '
}

need_root() { [[ $(id -u) == 0 ]] || die "needs root (loop devices, mounts, cgroups)"; }

# A step of `up` after the checks: its output kept, and on failure one line (its last) and exit 1,
# after the tiers this up made are removed.
made=()
fail_up() {
  local name
  printf 'storage: error: %s\n' "$*" >&2
  for name in "${made[@]}"; do tier_down "$name"; done
  rm -f "$state/step.err"
  remove_empty_folders
  exit 1
}
step() {
  local what=$1
  shift
  "$@" >"$state/step.err" 2>&1 || fail_up "$what failed: $(grep -v '^[[:space:]]*$' "$state/step.err" | head -1)"
}
remove_empty_folders() { rmdir "$mounts" "$images" "$state" 2>/dev/null || true; }

# Every tier of this set down (the cgroups of `exec NAME1,NAME2` first, their processes back to
# the root cgroup).
all_down() {
  local group env
  for group in "$blkio/$cgroup_prefix"-*+*; do
    [[ -d $group ]] || continue
    while read -r pid; do echo "$pid" >"$blkio/cgroup.procs" 2>/dev/null || true; done <"$group/cgroup.procs"
    rmdir "$group" 2>/dev/null || true
  done
  for env in "$state"/*.env "$state"/*.mount; do
    [[ -f $env ]] || continue
    env=$(basename "$env")
    tier_down "${env%.*}"
  done
}

tier_down() {
  local name=$1 dev
  if mountpoint -q "$mounts/$name" 2>/dev/null; then umount "$mounts/$name" || umount -l "$mounts/$name"; fi
  if [[ -f $state/$name.dev ]]; then
    dev=$(cat "$state/$name.dev")
    losetup -d "$dev" 2>/dev/null || true
  fi
  if [[ -d $blkio/$cgroup_prefix-$name ]]; then
    # Move any process left in it back to the root cgroup first.
    while read -r pid; do echo "$pid" >"$blkio/cgroup.procs" 2>/dev/null || true; done <"$blkio/$cgroup_prefix-$name/cgroup.procs"
    rmdir "$blkio/$cgroup_prefix-$name" 2>/dev/null || true
  fi
  rm -f "$images/$name.img" "$state/$name".*
  rmdir "$mounts/$name" 2>/dev/null || true
}

tier_up() {
  local f=$1 name fs size wbps rbps dev majmin
  check_profile "$f"
  name=$(profile_value "$f" name) fs=$(profile_value "$f" fs)
  size=$(to_bytes "$(profile_value "$f" size)") wbps=$(to_bytes "$(profile_value "$f" write_bps)")
  rbps=$(to_bytes "$(profile_value "$f" read_bps)")
  [[ $fs != xfs ]] || command -v mkfs.xfs >/dev/null || die "mkfs.xfs missing: apt-get install xfsprogs (scripts/packages-test.txt)"
  [[ -d $blkio ]] || die "no blkio cgroup v1 controller at $blkio"
  tier_down "$name"
  made+=("$name")
  mkdir -p "$state"
  echo "$mounts/$name" >"$state/$name.mount"
  step "$name: mkdir" mkdir -p "$images" "$mounts/$name"
  step "$name: truncate" truncate -s "$size" "$images/$name.img"
  if [[ $fs == xfs ]]; then
    step "$name: mkfs.xfs" mkfs.xfs -q -f "$images/$name.img"
  else
    step "$name: mkfs.ext4" mkfs.ext4 -q -F "$images/$name.img"
  fi
  # --direct-io=on: the loop device reads and writes its backing file with O_DIRECT, so the host's
  # page cache does not hold a second copy that a cache drop of the tier would leave behind.
  dev=$(losetup --find --show --direct-io=on "$images/$name.img" 2>"$state/step.err") ||
    fail_up "$name: losetup: $(tail -1 "$state/step.err")"
  echo "$dev" >"$state/$name.dev"
  step "$name: mount" mount "$dev" "$mounts/$name"
  majmin=$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ')
  mkdir -p "$blkio/$cgroup_prefix-$name"
  echo "$majmin $wbps" >"$blkio/$cgroup_prefix-$name/blkio.throttle.write_bps_device"
  echo "$majmin $rbps" >"$blkio/$cgroup_prefix-$name/blkio.throttle.read_bps_device"
  {
    echo "name=$name"
    echo "dev=$dev"
    echo "majmin=$majmin"
    echo "fs=$fs"
    echo "write_bps=$wbps"
    echo "read_bps=$rbps"
    echo "tier=$(profile_value "$f" tier)"
    echo "tier_gbps=$(profile_value "$f" tier_gbps)"
    echo "mount=$mounts/$name"
  } >"$state/$name.env"
  log "$name: $fs on $dev ($majmin) at $mounts/$name, write $wbps B/s, read $rbps B/s"
}

cmd=${1:-}
[[ -n $cmd ]] || { usage >&2; exit 2; }
shift
case $cmd in
  up)
    need_root
    profiles=()
    while [[ $# -gt 0 ]]; do
      case $1 in
        --profile) [[ $# -ge 2 ]] || die "--profile needs a value"; profiles+=("$(profile_path "$2")"); shift 2 ;;
        *) die "up: unknown argument '$1'" ;;
      esac
    done
    [[ ${#profiles[@]} -gt 0 ]] || profiles=("$(profile_path emulated-nvme)" "$(profile_path emulated-fsx)")
    # Every profile checked before anything is made or removed: the names distinct, the sizes
    # together within the free space (the images of this set's old tiers are freed first).
    free=$(free_bytes "$images")
    for img in "$images"/*.img; do [[ -f $img ]] && free=$((free + $(du -B1 "$img" | cut -f1))); done
    need_bytes=0 names=" "
    for p in "${profiles[@]}"; do
      check_profile "$p"
      n=$(profile_value "$p" name)
      [[ $names != *" $n "* ]] || die "$p: name: $n is given twice"
      names+="$n "
      [[ $(profile_value "$p" fs) != xfs ]] || command -v mkfs.xfs >/dev/null ||
        die "$p: fs: mkfs.xfs missing: apt-get install xfsprogs (scripts/packages-test.txt)"
      need_bytes=$((need_bytes + $(to_bytes "$(profile_value "$p" size)")))
      ((need_bytes <= free)) ||
        die "$p: size: $(profile_value "$p" size) does not fit: the tiers need $((need_bytes >> 20))M, $images has $((free >> 20))M free"
    done
    [[ -d $blkio ]] || die "no blkio cgroup v1 controller at $blkio"
    all_down
    for p in "${profiles[@]}"; do tier_up "$p"; done
    rm -f "$state/step.err"
    ;;
  down)
    need_root
    all_down
    remove_empty_folders
    ;;
  status)
    for env in "$state"/*.env; do
      [[ -f $env ]] || { echo "no tiers"; exit 0; }
      # shellcheck disable=SC1090
      (. "$env"
       bytes=$(awk -v d="$majmin" '$1 == d {printf "%s=%s ", $2, $3}' "$blkio/$cgroup_prefix-$name/blkio.throttle.io_service_bytes" 2>/dev/null)
       echo "$name $fs $dev $mount write_bps=$write_bps read_bps=$read_bps tier=$tier tier_gbps=$tier_gbps ${bytes}")
    done
    ;;
  path)
    [[ $# -eq 1 ]] || die "path NAME"
    [[ -f $state/$1.env ]] || die "no tier '$1' (storage.sh up)"
    sed -n 's/^mount=//p' "$state/$1.env"
    ;;
  value)  # value NAME KEY: a recorded fact of the tier (tests)
    [[ $# -eq 2 && -f $state/$1.env ]] || die "value NAME KEY"
    sed -n "s/^$2=//p" "$state/$1.env"
    ;;
  exec)
    [[ $# -ge 3 && $2 == -- ]] || die "exec NAME[,NAME...] -- CMD..."
    # Open MPI's mpirun refuses root without these: `exec NAME -- mpirun ...` runs as written.
    if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
    name=$1
    shift 2
    if [[ $name == *,* ]]; then
      # Several tiers (a tiered checkpoint: local, then target): a process is in one blkio cgroup,
      # so this one, PREFIX-NAME1+NAME2, holds every named tier's limits on its own device.
      group="$blkio/$cgroup_prefix-${name//,/+}"
      mkdir -p "$group"
      IFS=, read -ra names <<<"$name"
      for n in "${names[@]}"; do
        [[ -f $state/$n.env ]] || die "no tier '$n' (storage.sh up)"
        majmin=$(sed -n 's/^majmin=//p' "$state/$n.env")
        echo "$majmin $(sed -n 's/^write_bps=//p' "$state/$n.env")" >"$group/blkio.throttle.write_bps_device"
        echo "$majmin $(sed -n 's/^read_bps=//p' "$state/$n.env")" >"$group/blkio.throttle.read_bps_device"
      done
      echo $$ >"$group/cgroup.procs"
      exec "$@"
    fi
    [[ -d $blkio/$cgroup_prefix-$name ]] || die "no tier '$name' (storage.sh up)"
    echo $$ >"$blkio/$cgroup_prefix-$name/cgroup.procs"
    exec "$@"
    ;;
  drop)
    need_root
    sync
    echo 1 >/proc/sys/vm/drop_caches
    ;;
  -h | --help | help) usage ;;
  *) usage >&2; exit 2 ;;
esac
