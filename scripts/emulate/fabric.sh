#!/bin/bash
# Emulated multi-host fabric on one machine: N hosts as network namespaces, links shaped by tc tbf.
# See docs/emulation.md. Needs root.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
  cat <<EOF
usage: $0 COMMAND [options]

Emulates N hosts on this machine, each in a network namespace (${CCB_EMU_PREFIX}-h0, ${CCB_EMU_PREFIX}-h1, ...) with one
shaped data link (tc tbf, the same rate in both directions) and one unshaped management link,
all joined through bridges in a namespace of their own (${CCB_EMU_PREFIX}-br), addresses ${CCB_EMU_SUBNET}.0/24
(data) and ${CCB_EMU_MGMT_SUBNET}.0/24 (management) inside those namespaces only.

NEEDS ROOT. It changes this machine by adding: network namespaces ${CCB_EMU_PREFIX}-br and ${CCB_EMU_PREFIX}-h*
(with their veth pairs, bridges and tc qdiscs, which live only inside them), files
/etc/netns/${CCB_EMU_PREFIX}-*/hosts (name resolution inside the namespaces) and $CCB_EMU_STATE.
Nothing is added to the root namespace's interfaces, routes or firewall. 'down' removes it all,
and 'run' removes it all when it exits, whatever the outcome (trap on EXIT, INT, TERM).

commands:
  up [--hosts N] [--profile NAME|FILE | --rate RATE]   create the fabric (replaces an old one)
  down                                                 remove everything this script created
  status                                               hosts, qdiscs and bytes sent per link
  set-rate RATE [HOST_INDEX...]                        change link rates (default: all hosts)
  set-uplink-rate RATE [LEAF_INDEX...]                 leaf-spine: change uplink rates (default: all leaves)
  link down|up HOST_INDEX                              set a host's data link down or up
  run [--hosts N] [--ranks-per-host K] [--profile P | --rate RATE] [--keep] -- CCBENCH_RUN_ARGS...
        up, then mpirun ccbench run across the hosts with the profile's fabric metadata
        (--fabric-path, --fabric-generation, --link-gbps, --label), then report bytes per link
        and down (unless --keep). Exit code: mpirun's.
  leftovers                                            list anything of ours left on the machine
  exec [--] CMD...                                     run CMD where mpirun runs (namespace ${CCB_EMU_PREFIX}-br) with
        the environment that makes a plain 'mpirun --host ${CCB_EMU_PREFIX}-h0,${CCB_EMU_PREFIX}-h3 ...' reach the emulated hosts
        (OMPI_MCA_* for the agent, btl/oob networks, binding; allreduce pinned to reduce+broadcast
        unless OMPI_MCA_coll_tuned_allreduce_algorithm is set). Exit code: CMD's. The fabric must be up.
  stop-ranks HOST_INDEX [SECONDS]                      fault: SIGSTOP every ccbench process that starts
        on that host, until killed or for SECONDS (a rank that hangs without dying). Faults also:
        'set-rate RATE HOST_INDEX' (a slow link), 'link down HOST_INDEX' (a dead link).

RATE is tc syntax (400mbit, 1gbit). Profiles: configs/fabrics/*.yaml (emulated-v3, emulated-v4,
emulated-leafspine). A profile with 'topology: leaf-spine' puts the hosts behind 'leaves: L' leaf
bridges in consecutive blocks (host i on leaf i*L/N) and joins each leaf to a spine bridge by one
uplink shaped at 'uplink_rate' (default: the host rate), so flows between leaves share it; its
'hosts' key is the default of --hosts (else 2). --rate changes the host links only.
A bad profile (unknown key, a value out of range) is a one-line error naming the file and key, exit 2.
environment: CCB_EMU_PREFIX (default ccb; now $CCB_EMU_PREFIX): every name starts with it (namespaces
             PREFIX-br, PREFIX-hN) and the state is its own (/run/ccbench-emulate-PREFIX; ccb's:
             /run/ccbench-emulate), so fabrics of different prefixes never touch each other: pick one of
             your own on a shared machine (a letter and up to 8 letters or digits) and give it to every
             command, e.g. 'sudo CCB_EMU_PREFIX=ann $0 up --hosts 4', then
             'sudo CCB_EMU_PREFIX=ann $0 exec -- mpirun --host ann-h0:1,ann-h1:1 ...'.
             CCB_EMU_STATE (default as said), CCB_EMU_SUBNET and CCB_EMU_MGMT_SUBNET (defaults
             $CCB_EMU_SUBNET and $CCB_EMU_MGMT_SUBNET; seen only inside the namespaces),
             CCBENCH (default build/ccbench), CCB_EMU_BTL (default self,vader,tcp),
             CCB_EMU_BURST (tbf burst, default $CCB_EMU_BURST), CCB_EMU_LATENCY (default $CCB_EMU_LATENCY)
EOF
}

need_root() { [[ $(id -u) -eq 0 ]] || emu_die "needs root (it creates network namespaces, veth pairs, bridges and tc qdiscs)"; }

# Sets: rate, generation, link_gbps, fabric_path, label, hosts (when --hosts was not given), leaves
# (0 = flat) and uplink_rate from --profile, --rate and --hosts. Bad profile values: exit 2 naming
# the file and the key.
resolve_fabric() {
  local profile=$1 rate_flag=$2 f="" topology="" p_hosts="" p_leaves=""
  rate="" generation="" link_gbps="" fabric_path="tcp" label="" leaves=0 uplink_rate=""
  if [[ -n $profile ]]; then
    f=$(emu_profile_path "$profile")
    emu_profile_check "$f"
    rate=$(emu_profile "$f" rate)
    generation=$(emu_profile "$f" generation)
    link_gbps=$(emu_profile "$f" link_gbps)
    fabric_path=$(emu_profile "$f" path)
    label=$(emu_profile "$f" name)
    topology=$(emu_profile "$f" topology)
    p_leaves=$(emu_profile "$f" leaves)
    uplink_rate=$(emu_profile "$f" uplink_rate)
    p_hosts=$(emu_profile "$f" hosts)
    [[ -n $fabric_path ]] || fabric_path=tcp
    [[ -z $rate || $(emu_rate_gbps "$rate") != nan ]] || emu_die "$f: rate: '$rate' is not tc syntax (e.g. 400mbit, 1gbit)"
    if [[ -n $p_hosts ]]; then
      emu_require_count "$f: hosts:" "$p_hosts" 1 64
      [[ -n $hosts ]] || hosts=$((10#$p_hosts))
    fi
    case $topology in
      "" | flat)
        [[ -z $p_leaves ]] || emu_die "$f: leaves: only with 'topology: leaf-spine' (topology is ${topology:-flat})"
        [[ -z $uplink_rate ]] || emu_die "$f: uplink_rate: only with 'topology: leaf-spine' (topology is ${topology:-flat})"
        ;;
      leaf-spine)
        leaves=${p_leaves:-2}
        emu_require_count "$f: leaves:" "$leaves" 2 16
        leaves=$((10#$leaves))
        [[ -z $uplink_rate || $(emu_rate_gbps "$uplink_rate") != nan ]] ||
          emu_die "$f: uplink_rate: '$uplink_rate' is not tc syntax (e.g. 400mbit, 1gbit)"
        ;;
      *) emu_die "$f: topology: '$topology' is not flat or leaf-spine" ;;
    esac
  fi
  [[ -n $hosts ]] || hosts=2
  hosts=$((10#$hosts))
  [[ -n $rate_flag ]] && rate=$rate_flag
  [[ -n $rate ]] || rate=400mbit
  [[ $(emu_rate_gbps "$rate") != nan ]] || emu_die "rate '$rate' is not tc syntax (e.g. 400mbit, 1gbit)"
  [[ -n $uplink_rate ]] || uplink_rate=$rate
  if ((leaves > 0)); then
    emu_require_count "--hosts" "$hosts" 1 64
    ((10#$hosts >= leaves)) || emu_die "$f: leaves: $leaves leaves need at least $leaves hosts, got $hosts"
  fi
  [[ -n $link_gbps ]] || link_gbps=$(emu_rate_gbps "$rate")
  [[ -n $label ]] || label="emulated-$rate"
  return 0
}

# One line on the fabric's layout, for the log.
describe_topology() {
  if ((leaves == 0)); then
    echo "flat (every host on one bridge)"
    return
  fi
  local l i d="leaf-spine, $leaves leaves, uplinks at $uplink_rate both ways:"
  for ((l = 0; l < leaves; l++)); do
    d+=" leaf $l ="
    for ((i = 0; i < hosts; i++)); do ((i * leaves / hosts == l)) && d+=" $(emu_host_ns "$i")"; done
    ((l + 1 < leaves)) && d+=";"
  done
  echo "$d"
}

cmd=${1:-}
[[ -n $cmd ]] || { usage >&2; exit 2; }
shift
hosts="" ranks_per_host=1 profile="" rate_flag="" keep=0
parse_common() {
  while [[ $# -gt 0 ]]; do
    case $1 in
      --hosts) hosts=$2; shift 2 ;;
      --ranks-per-host) ranks_per_host=$2; shift 2 ;;
      --profile) profile=$2; shift 2 ;;
      --rate) rate_flag=$2; shift 2 ;;
      --keep) keep=1; shift ;;
      --) shift; rest=("$@"); return ;;
      -h|--help) usage; exit 0 ;;
      *) emu_die "unknown option '$1' (see --help)" ;;
    esac
  done
  rest=()
}
# Numbers are checked as digits before any arithmetic sees them.
check_counts() {
  [[ -z $hosts ]] || emu_require_count "--hosts" "$hosts" 1 64
  emu_require_count "--ranks-per-host" "$ranks_per_host" 1 1024
}

case $cmd in
  -h|--help|help) usage ;;
  up)
    need_root
    parse_common "$@"
    check_counts
    resolve_fabric "$profile" "$rate_flag"
    emu_up "$hosts" "$rate" "$leaves" "$uplink_rate"
    # With another prefix the hint carries it: a bare 'down' would remove the default ccb fabric.
    own_env=""
    [[ $CCB_EMU_PREFIX != ccb ]] &&
      own_env="CCB_EMU_PREFIX=$CCB_EMU_PREFIX CCB_EMU_SUBNET=$CCB_EMU_SUBNET CCB_EMU_MGMT_SUBNET=$CCB_EMU_MGMT_SUBNET CCB_EMU_STATE=$CCB_EMU_STATE "
    emu_log "up: $hosts hosts, links at $rate ($label), $(describe_topology); 'sudo $own_env$0 down' removes it"
    ;;
  down)
    need_root
    emu_down
    left=$(emu_leftovers)
    [[ -z $left ]] || { echo "$left" >&2; emu_die "some of the fabric is still there"; }
    ;;
  status)
    cat "$CCB_EMU_STATE/hosts" 2>/dev/null || { echo "no emulated fabric is up"; exit 0; }
    echo "rate: $(cat "$CCB_EMU_STATE/rate")"
    echo "topology: $(cat "$CCB_EMU_STATE/topology" 2>/dev/null || echo flat)"
    emu_link_status
    emu_link_bytes
    emu_uplink_bytes
    ;;
  set-rate)
    need_root
    [[ $# -ge 1 ]] || emu_die "set-rate RATE [HOST_INDEX...]"
    [[ $(emu_rate_gbps "$1") != nan ]] || emu_die "rate '$1' is not tc syntax (e.g. 400mbit, 1gbit)"
    emu_set_rate "$@"
    ;;
  set-uplink-rate)
    need_root
    [[ $# -ge 1 ]] || emu_die "set-uplink-rate RATE [LEAF_INDEX...]"
    [[ -f $CCB_EMU_STATE/hosts ]] || emu_die "no emulated fabric is up ('$0 up --profile emulated-leafspine' first)"
    [[ $(emu_rate_gbps "$1") != nan ]] || emu_die "rate '$1' is not tc syntax (e.g. 400mbit, 1gbit)"
    emu_set_uplink_rate "$@"
    ;;
  link)
    need_root
    [[ $# -eq 2 && ($1 == down || $1 == up) ]] || emu_die "link down|up HOST_INDEX"
    emu_require_count "HOST_INDEX" "$2" 0 63
    ip -n "$(emu_host_ns "$2")" link set "$EMU_HOST_IF" "$1"
    ;;
  leftovers)
    left=$(emu_leftovers)
    echo "${left:-none}"
    ;;
  exec)
    need_root
    [[ ${1:-} == -- ]] && shift
    [[ $# -ge 1 ]] || emu_die "exec [--] CMD..."
    [[ -f $CCB_EMU_STATE/hosts ]] || emu_die "no emulated fabric is up ('$0 up --hosts N' first)"
    emu_exec "$@"
    ;;
  stop-ranks)
    need_root
    [[ $# -ge 1 && $1 =~ ^[0-9]+$ && (${2:-0} =~ ^[0-9]+$) ]] || emu_die "stop-ranks HOST_INDEX [SECONDS]"
    emu_stop_ranks "$1" "${2:-0}"
    ;;
  run)
    need_root
    parse_common "$@"
    check_counts
    resolve_fabric "$profile" "$rate_flag"
    ccbench=${CCBENCH:-$CCB_EMU_ROOT/build/ccbench}
    [[ -x $ccbench ]] || emu_die "no ccbench binary at $ccbench (build it, or set CCBENCH=path)"
    ccbench=$(cd "$(dirname "$ccbench")" && pwd)/$(basename "$ccbench")
    if [[ $keep -eq 0 ]]; then trap 'emu_down' EXIT; fi
    trap 'exit 130' INT
    trap 'exit 143' TERM
    emu_log "needs root; creates namespaces ${CCB_EMU_BR_NS}, $(emu_host_ns 0)..$(emu_host_ns $((hosts - 1))) with veth pairs, bridges and tbf qdiscs; all removed at exit"
    emu_up "$hosts" "$rate" "$leaves" "$uplink_rate"
    spec=""
    for ((i = 0; i < hosts; i++)); do spec+="${spec:+,}$(emu_host_ns "$i"):$ranks_per_host"; done
    emu_log "fabric $label: $hosts hosts x $ranks_per_host ranks, links at $rate both ways (generation ${generation:-unset}, link_gbps $link_gbps), $(describe_topology)"
    set +e
    meta=(--fabric-path "$fabric_path" --link-gbps "$link_gbps" --label "$label")
    [[ -n $generation ]] && meta+=(--fabric-generation "$generation")
    # The fabric's metadata first: flags given after -- win.
    emu_mpirun $((hosts * ranks_per_host)) "$spec" "$ccbench" run "${meta[@]}" "${rest[@]}"
    rc=$?
    set -e
    emu_log "bytes through the shaped links (up = host sends, down = host receives):"
    { emu_link_bytes; emu_uplink_bytes; } | sed 's/^/emulate:   /' >&2
    exit "$rc"
    ;;
  *) usage >&2; exit 2 ;;
esac
