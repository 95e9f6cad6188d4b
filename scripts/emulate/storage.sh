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
  up [--profile NAME|FILE]...   make the tiers (default: emulated-nvme and emulated-fsx); replaces old ones
  down                          unmount, detach the loop devices, remove the cgroups and images
  status                        each tier: mount, device, limits, bytes the throttle saw
  path NAME                     the tier's mount point
  exec NAME -- CMD...           run CMD in the tier's blkio cgroup (e.g. mpirun ... ccbench checkpoint)
  exec NAME1,NAME2 -- CMD...    the same in one cgroup holding both tiers' limits (--tiered)
  drop NAME                     sync and drop the page cache (root)
Profiles: configs/storage/emulated-nvme.yaml, emulated-fsx.yaml, emulated-small.yaml (flat key: value).
A bad profile (unknown key, bad value) is one line naming the file and key, exit 2.
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
  [[ $v =~ ^([0-9]+)([KMG]?)$ ]] || return 1
  n=${BASH_REMATCH[1]} unit=${BASH_REMATCH[2]}
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
}

need_root() { [[ $(id -u) == 0 ]] || die "needs root (loop devices, mounts, cgroups)"; }

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
  mkdir -p "$state" "$images" "$mounts/$name"
  truncate -s "$size" "$images/$name.img"
  if [[ $fs == xfs ]]; then mkfs.xfs -q -f "$images/$name.img"; else mkfs.ext4 -q -F "$images/$name.img"; fi
  # --direct-io=on: the loop device reads and writes its backing file with O_DIRECT, so the host's
  # page cache does not hold a second copy that a cache drop of the tier would leave behind.
  dev=$(losetup --find --show --direct-io=on "$images/$name.img")
  echo "$dev" >"$state/$name.dev"
  mount "$dev" "$mounts/$name"
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
    for p in "${profiles[@]}"; do tier_up "$p"; done
    ;;
  down)
    need_root
    # The cgroups of `exec NAME1,NAME2` first (their processes back to the root cgroup).
    for group in "$blkio/$cgroup_prefix"-*+*; do
      [[ -d $group ]] || continue
      while read -r pid; do echo "$pid" >"$blkio/cgroup.procs" 2>/dev/null || true; done <"$group/cgroup.procs"
      rmdir "$group" 2>/dev/null || true
    done
    for env in "$state"/*.env; do
      [[ -f $env ]] || continue
      tier_down "$(basename "$env" .env)"
    done
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
