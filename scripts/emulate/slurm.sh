#!/bin/bash
# Slurm on the emulated fabric: slurmctld in the launcher's namespace (ccb-br), one slurmd per
# emulated host inside that host's network namespace (and a UTS namespace with its name), munge
# shared, slurm.conf generated from the hosts. See docs/emulation.md, "Slurm". Needs root and
# Debian's slurm-wlm and munge.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
dir=$CCB_EMU_STATE/slurm
conf=$dir/slurm.conf

usage() {
  cat <<EOF
usage: $0 COMMAND [options]

  up [--hosts N]     bring the emulated fabric up first when it is not (N hosts, default 4), then
                     munged, slurmctld in ${CCB_EMU_BR_NS} and a slurmd in each host's namespace; waits
                     (60 s at most) until sinfo shows every host idle
  down               stop the daemons and remove $dir (the fabric stays: 'fabric.sh down')
  status             sinfo of the emulated cluster
  exec [--] CMD...   run CMD where srun and sbatch work: in ${CCB_EMU_BR_NS}, with SLURM_CONF and the
                     Open MPI settings of 'fabric.sh exec' (ranks use the data network)

Nodes are named like the hosts (${CCB_EMU_PREFIX}-h0 ...), each with this machine's CPUs and an
equal share of its memory, in partition 'emulated'; the daemons talk over the management network.
Each node's jobs see a /tmp of their own ($dir/tmp-NODE): write results elsewhere (a shared path).
The checkout and the build are the exception: where they are under /tmp, they are bound into each
node's /tmp at their own paths (the build: the CMake build folder of \$CCBENCH, default the checkout's
build/; set CCBENCH at 'up' for a build elsewhere).
Files: $dir (configuration, logs, state).
EOF
}

need_root() { [[ $(id -u) -eq 0 ]] || emu_die "needs root (starts munged, slurmctld and slurmd in namespaces)"; }
need_commands() {
  local c
  for c in munged slurmctld slurmd sinfo scontrol srun sbatch; do
    command -v "$c" >/dev/null || emu_die "$c not found (Debian packages slurm-wlm and munge)"
  done
}
# as_host NS CMD...: CMD in namespace NS's network and a UTS namespace whose host name is NS.
as_host() {
  local ns=$1
  shift
  nsenter --net="/run/netns/$ns" unshare --uts -- /bin/sh -c 'hostname "$0" && exec "$@"' "$ns" "$@"
}
in_launcher() { ip netns exec "$CCB_EMU_BR_NS" env SLURM_CONF="$conf" "$@"; }

# The paths under /tmp that every node must see as this machine does, one a line: the checkout and
# the build (the CMake build folder holding $CCBENCH, default the checkout's build/). A node's /tmp is
# its own, so a clone under /tmp would otherwise vanish from the nodes. A path inside another is
# left out: the outer one's bind carries it.
shared_tmp_paths() {
  local ccbench=${CCBENCH:-$CCB_EMU_ROOT/build/ccbench} build p
  build=$(realpath -m "$(dirname "$ccbench")")
  # The build folder's root (its CMakeCache.txt): ccbench-measure and the build's own files beside it.
  for p in "$build" "$(dirname "$build")" "$(dirname "$(dirname "$build")")"; do
    [[ -f $p/CMakeCache.txt ]] && { build=$p; break; }
  done
  for p in "$(realpath -m "$CCB_EMU_ROOT")" "$build"; do
    [[ $p == /tmp/* ]] && echo "$p"
  done | sort -u | awk 'NR == 1 || index($0, last "/") != 1 {print; last = $0}'
}

slurm_down() {
  [[ -d $dir ]] || return 0
  in_launcher scontrol shutdown >/dev/null 2>&1 || true
  local f pid
  for f in "$dir"/slurmd-*.pid "$dir"/slurmctld.pid "$dir"/munged.pid; do
    pid=$(cat "$f" 2>/dev/null) || continue  # a daemon that shut down removed its own
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$dir"
}

slurm_up() {
  local n=$1 i cpus mem_mb nodes=""
  if [[ ! -f $CCB_EMU_STATE/hosts ]]; then
    "$here/fabric.sh" up --hosts "$n"
  fi
  n=$(emu_host_count)
  slurm_down
  mkdir -p "$dir/munge" "$dir/state"
  chmod 700 "$dir/munge"
  mungekey -c -k "$dir/munge/munge.key" 2>/dev/null || dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  # The socket is a file: every namespace reaches it, as every host would reach its own munged
  # holding the same key.
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munge/seed" || emu_die "munged did not start (see $dir/munged.log)"
  cpus=$(nproc)
  mem_mb=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / n))
  {
    cat <<CONF
ClusterName=ccbemu
SlurmctldHost=${CCB_EMU_BR_NS}(${CCB_EMU_MGMT_SUBNET}.254)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
SlurmctldTimeout=30
SlurmdTimeout=20
InactiveLimit=0
KillWait=5
MessageTimeout=20
CONF
    for ((i = 0; i < n; i++)); do
      echo "NodeName=$(emu_host_ns "$i") NodeAddr=$(emu_host_mgmt_addr "$i") CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN"
      nodes+="${nodes:+,}$(emu_host_ns "$i")"
    done
    echo "PartitionName=emulated Nodes=$nodes Default=YES MaxTime=UNLIMITED State=UP OverSubscribe=YES"
  } >"$conf"
  # nsenter --net, not `ip netns exec`: the latter remounts /sys for the namespace, which hides
  # /sys/fs/cgroup from slurmd's cgroup plugin. A UTS namespace gives each daemon its node's host
  # name (slurmctld checks it against SlurmctldHost).
  as_host "$CCB_EMU_BR_NS" slurmctld -f "$conf" || emu_die "slurmctld did not start (see $dir/slurmctld.log)"
  local shared=() p node_tmp
  mapfile -t shared < <(shared_tmp_paths)
  for ((i = 0; i < n; i++)); do
    mkdir -p "$dir/spool-$(emu_host_ns "$i")"
    # Each node its own /tmp (a mount namespace), as on separate hosts: Slurm's PMIx plugin makes
    # the same per-step folder name under /tmp on every node of a step. The checkout and the build
    # are bound into it at their own paths first (rbind: the node's /tmp then carries them).
    node_tmp=$dir/tmp-$(emu_host_ns "$i")
    mkdir -p "$node_tmp"
    chmod 1777 "$node_tmp"
    for p in "${shared[@]}"; do mkdir -p "$node_tmp${p#/tmp}"; done
    as_host "$(emu_host_ns "$i")" unshare --mount --propagation private -- /bin/sh -c '
      node_tmp=$1; shift
      while [ "$1" != -- ]; do mount --rbind "$1" "$node_tmp${1#/tmp}" || exit 1; shift; done
      shift
      mount --rbind "$node_tmp" /tmp && exec "$@"' sh "$node_tmp" "${shared[@]}" -- slurmd -f "$conf" -N "$(emu_host_ns "$i")" ||
      emu_die "slurmd on $(emu_host_ns "$i") did not start (see $dir/slurmd-$(emu_host_ns "$i").log)"
  done
  ((${#shared[@]} == 0)) || emu_log "slurm: every node sees ${shared[*]} (under /tmp, bound into each node's own /tmp)"
  local idle=0
  for _ in $(seq 120); do
    idle=$(in_launcher sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 ~ /^idle/' | wc -l)
    ((idle == n)) && break
    sleep 0.5
  done
  ((idle == n)) || emu_die "only $idle of $n nodes became idle in 60 s: $(in_launcher sinfo -h -N -o '%N %t' 2>&1 | tr '\n' ' ')"
  emu_log "slurm up: $n nodes idle in partition emulated; '$0 exec -- srun -N $n hostname' runs across them"
}

cmd=${1:-}
[[ -n $cmd ]] && shift
case $cmd in
  -h|--help|help|"") usage ;;
  up)
    need_root
    need_commands
    n=4
    while [[ $# -gt 0 ]]; do
      case $1 in
        --hosts) [[ $# -ge 2 ]] || emu_die "--hosts needs a value"; emu_require_count "--hosts" "$2" 1 64; n=$2; shift 2 ;;
        *) emu_die "up: unknown argument '$1' (see --help)" ;;
      esac
    done
    slurm_up "$n"
    ;;
  down)
    need_root
    slurm_down
    ;;
  status)
    [[ -f $conf ]] || { echo "no emulated Slurm is up"; exit 0; }
    in_launcher sinfo -N -o '%N %t %c %m'
    ;;
  exec)
    need_root
    [[ ${1:-} == -- ]] && shift
    [[ $# -ge 1 ]] || emu_die "exec [--] CMD..."
    [[ -f $conf ]] || emu_die "no emulated Slurm is up ('$0 up' first)"
    SLURM_CONF=$conf emu_exec "$@"
    ;;
  *) emu_die "unknown command '$cmd' (see --help)" ;;
esac
