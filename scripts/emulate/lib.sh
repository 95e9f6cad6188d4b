# shellcheck shell=bash
# Emulated multi-host fabric: shared functions (sourced by fabric.sh, migrate.sh and the e2e tests).
#
# Topology (everything lives in network namespaces this file creates; the root namespace is not
# touched apart from the namespace handles in /run/netns and the per-namespace /etc/netns/<ns>/hosts):
#
#   ccb-br   (namespace)  data bridge "ccb-br0" 10.213.0.254/24, management bridge "ccb-brm"
#            10.213.1.254/24; mpirun runs here
#     ├── veth ccb-h0-p  <──>  ccb0  10.213.0.1/24 in namespace ccb-h0 (emulated host "ccb-h0"), shaped
#     ├── veth ccb-h0-m  <──>  ccbm0 10.213.1.1/24 in namespace ccb-h0, unshaped
#     ├── veth ccb-h1-p  <──>  ccb0  10.213.0.2/24 in namespace ccb-h1, shaped
#     └── ...
#
# The data network carries MPI's traffic (btl tcp); the management network carries Open MPI's own
# control traffic (oob, between mpirun and the orted daemons), as on a cluster whose launcher talks
# over Ethernet while the collectives use the fast fabric (EFA). So a data link set down stalls the
# collectives but leaves the launcher able to clean up, and the control messages do not disturb
# the shaped links' measurements.
#
# Each host's link is shaped with `tc qdisc tbf` on both ends of its veth: egress of ccb0 (what the
# host sends) and egress of ccb-hN-p (what it receives), so the link has the same rate in both
# directions, like a full-duplex NIC port. Ranks started by mpirun through agent.sh run inside the
# host's network namespace and in a UTS namespace of their own whose hostname is the host's name,
# so Open MPI and ccbench see N distinct hosts.
#
# Leaf-spine topology (emu_up N RATE LEAVES UPLINK_RATE, profile key `topology: leaf-spine`): the
# bridge ccb-br0 becomes the spine; each leaf is a bridge ccb-lfL in ccb-br joined to the spine by
# ONE veth pair (ccb-lL-u on the leaf, ccb-lL-s on the spine) shaped with tbf at UPLINK_RATE at both
# ends. Host i's data port joins leaf i*LEAVES/N (consecutive blocks: 4 hosts, 2 leaves: h0 h1 on
# leaf 0, h2 h3 on leaf 1), so traffic between leaves shares the uplinks while traffic inside a leaf
# only crosses the hosts' own links. The management network stays flat.

# Every name of a fabric starts with its prefix (namespaces PREFIX-br and PREFIX-hN, veths
# PREFIX-hN-p) and its state folder is the prefix's own, so fabrics of different prefixes (two
# users, a user and the test suite) never touch each other. A letter and up to 8 letters or digits:
# the longest interface name built from it, PREFIX-h63-p, must fit Linux's 15 characters.
CCB_EMU_PREFIX=${CCB_EMU_PREFIX:-ccb}
if [[ ! $CCB_EMU_PREFIX =~ ^[a-z][a-z0-9]{0,8}$ ]]; then
  printf "emulate: error: CCB_EMU_PREFIX '%s': expected a letter and up to 8 letters or digits (interface names PREFIX-h63-p fit 15 characters)\n" "$CCB_EMU_PREFIX" >&2
  exit 2
fi
CCB_EMU_SUBNET=${CCB_EMU_SUBNET:-10.213.0}       # data network (shaped)
CCB_EMU_MGMT_SUBNET=${CCB_EMU_MGMT_SUBNET:-10.213.1}  # management network (unshaped)
CCB_EMU_BR_NS="${CCB_EMU_PREFIX}-br"
CCB_EMU_BRIDGE="${CCB_EMU_PREFIX}-br0"
CCB_EMU_MGMT_BRIDGE="${CCB_EMU_PREFIX}-brm"
CCB_EMU_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CCB_EMU_ROOT=$(cd "$CCB_EMU_DIR/../.." && pwd)
if [[ $CCB_EMU_PREFIX == ccb ]]; then
  CCB_EMU_STATE=${CCB_EMU_STATE:-/run/ccbench-emulate}
else
  CCB_EMU_STATE=${CCB_EMU_STATE:-/run/ccbench-emulate-$CCB_EMU_PREFIX}
fi
# Exported: agent.sh, which mpirun starts, must read this fabric's host list, not the default's.
export CCB_EMU_PREFIX CCB_EMU_STATE
# tbf: burst (bytes a host may send at line rate before the shaper holds it back) and the queue's
# latency bound. A small burst keeps the rate exact for transfers of a few MiB.
CCB_EMU_BURST=${CCB_EMU_BURST:-32kb}
CCB_EMU_LATENCY=${CCB_EMU_LATENCY:-100ms}

emu_log() { printf 'emulate: %s\n' "$*" >&2; }
emu_die() { printf 'emulate: error: %s\n' "$*" >&2; exit 2; }

emu_host_ns() { echo "${CCB_EMU_PREFIX}-h$1"; }
emu_host_addr() { echo "${CCB_EMU_SUBNET}.$(($1 + 1))"; }
emu_host_mgmt_addr() { echo "${CCB_EMU_MGMT_SUBNET}.$(($1 + 1))"; }
emu_host_port() { echo "${CCB_EMU_PREFIX}-h$1-p"; }       # bridge side of host i's data veth
emu_host_mgmt_port() { echo "${CCB_EMU_PREFIX}-h$1-m"; }  # bridge side of host i's management veth
emu_leaf_bridge() { echo "${CCB_EMU_PREFIX}-lf$1"; }      # leaf L's bridge (in ccb-br), leaf-spine only
emu_uplink_leaf_port() { echo "${CCB_EMU_PREFIX}-l$1-u"; }  # leaf L's end of its uplink: egress = leaf -> spine
emu_uplink_spine_port() { echo "${CCB_EMU_PREFIX}-l$1-s"; } # the spine's end: egress = spine -> leaf
EMU_HOST_IF=${CCB_EMU_PREFIX}0                             # host side (inside ccb-hN), data
EMU_HOST_MGMT_IF=${CCB_EMU_PREFIX}m0                       # host side, management

# Exit 77 (ctest's SKIP_RETURN_CODE) with the reason when this machine cannot host the fabric.
emu_require_or_skip() {
  local why=""
  if [[ $(id -u) -ne 0 ]]; then
    why="needs root (creates network namespaces, veth pairs, a bridge and tc qdiscs)"
  elif ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
    why="needs iproute2 (ip, tc)"
  elif ! command -v mpirun >/dev/null; then
    why="needs mpirun (Open MPI)"
  elif ! command -v unshare >/dev/null; then
    why="needs unshare (util-linux)"
  elif ! ip netns add "${CCB_EMU_PREFIX}-probe" 2>/dev/null; then
    why="'ip netns add' is not permitted here (no CAP_SYS_ADMIN or no netns support)"
  else
    ip netns del "${CCB_EMU_PREFIX}-probe" 2>/dev/null
    if ! ip netns add "${CCB_EMU_PREFIX}-probe2" 2>/dev/null ||
       ! ip -n "${CCB_EMU_PREFIX}-probe2" link add "${CCB_EMU_PREFIX}-pv0" type veth peer name "${CCB_EMU_PREFIX}-pv1" 2>/dev/null ||
       ! tc -n "${CCB_EMU_PREFIX}-probe2" qdisc add dev "${CCB_EMU_PREFIX}-pv0" root tbf rate 100mbit burst 32kb latency 50ms 2>/dev/null; then
      why="veth pairs or the tbf qdisc are not available (kernel modules veth, sch_tbf)"
    fi
    ip netns del "${CCB_EMU_PREFIX}-probe2" 2>/dev/null
  fi
  if [[ -n $why ]]; then
    echo "SKIP: $why"
    exit 77
  fi
}

# Everything this fabric may have left behind (a previous run that was SIGKILLed): namespaces
# named ccb-* (their veths and qdiscs go with them), /etc/netns/ccb-*, the state folder.
emu_down() {
  local ns
  # Processes still inside the host namespaces (a SIGSTOPped rank, an orphaned orted) would keep
  # nothing alive (a namespace dies with its last handle and process), but end them so no stray
  # rank keeps running: only PIDs whose network namespace is one of ours.
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${CCB_EMU_PREFIX}-(h[0-9]+|br|probe2?)$"); do
    local pids
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    if [[ -n $pids ]]; then
      # shellcheck disable=SC2086
      kill -CONT $pids 2>/dev/null || true
      # shellcheck disable=SC2086
      kill -KILL $pids 2>/dev/null || true
    fi
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
  rm -rf "$CCB_EMU_STATE"
}

# emu_tbf NS DEV RATE: (re)place the root qdisc of DEV in namespace NS by a token bucket at RATE.
emu_tbf() {
  tc -n "$1" qdisc replace dev "$2" root tbf rate "$3" burst "$CCB_EMU_BURST" latency "$CCB_EMU_LATENCY"
}

# emu_up N RATE [LEAVES UPLINK_RATE]: N hosts, each link at RATE (tc syntax: 400mbit, 1gbit, ...).
# Without LEAVES (or LEAVES 0): flat, every host port on one bridge. With LEAVES (2..16, at most N):
# leaf-spine, host i behind leaf i*LEAVES/N, each leaf's single uplink to the spine at UPLINK_RATE
# (default RATE). Idempotent (tears down whatever a previous run left first).
emu_up() {
  local n=$1 rate=$2 leaves=${3:-0} uplink_rate=${4:-$2} i ns addr port l
  emu_require_count "host count" "$n" 1 64
  if [[ $leaves != 0 ]]; then
    emu_require_count "leaf count" "$leaves" 2 16
    ((10#$leaves <= n)) || emu_die "$leaves leaves need at least $leaves hosts, got $n"
    leaves=$((10#$leaves))
  fi
  emu_down
  mkdir -p "$CCB_EMU_STATE"
  ip netns add "$CCB_EMU_BR_NS"
  ip -n "$CCB_EMU_BR_NS" link set lo up
  ip -n "$CCB_EMU_BR_NS" link add "$CCB_EMU_BRIDGE" type bridge
  ip -n "$CCB_EMU_BR_NS" addr add "${CCB_EMU_SUBNET}.254/24" dev "$CCB_EMU_BRIDGE"
  ip -n "$CCB_EMU_BR_NS" link set "$CCB_EMU_BRIDGE" up
  ip -n "$CCB_EMU_BR_NS" link add "$CCB_EMU_MGMT_BRIDGE" type bridge
  ip -n "$CCB_EMU_BR_NS" addr add "${CCB_EMU_MGMT_SUBNET}.254/24" dev "$CCB_EMU_MGMT_BRIDGE"
  ip -n "$CCB_EMU_BR_NS" link set "$CCB_EMU_MGMT_BRIDGE" up
  # Leaf-spine: one bridge per leaf, joined to the spine (ccb-br0) by one shaped veth pair.
  for ((l = 0; l < leaves; l++)); do
    ip -n "$CCB_EMU_BR_NS" link add "$(emu_leaf_bridge "$l")" type bridge
    ip -n "$CCB_EMU_BR_NS" link set "$(emu_leaf_bridge "$l")" up
    ip -n "$CCB_EMU_BR_NS" link add "$(emu_uplink_leaf_port "$l")" type veth peer name "$(emu_uplink_spine_port "$l")"
    ip -n "$CCB_EMU_BR_NS" link set "$(emu_uplink_leaf_port "$l")" master "$(emu_leaf_bridge "$l")"
    ip -n "$CCB_EMU_BR_NS" link set "$(emu_uplink_spine_port "$l")" master "$CCB_EMU_BRIDGE"
    ip -n "$CCB_EMU_BR_NS" link set "$(emu_uplink_leaf_port "$l")" up
    ip -n "$CCB_EMU_BR_NS" link set "$(emu_uplink_spine_port "$l")" up
    emu_tbf "$CCB_EMU_BR_NS" "$(emu_uplink_leaf_port "$l")" "$uplink_rate"
    emu_tbf "$CCB_EMU_BR_NS" "$(emu_uplink_spine_port "$l")" "$uplink_rate"
  done
  local hosts="127.0.0.1 localhost\n${CCB_EMU_SUBNET}.254 ${CCB_EMU_BR_NS}\n"
  for ((i = 0; i < n; i++)); do
    hosts+="$(emu_host_addr "$i") $(emu_host_ns "$i")\n$(emu_host_mgmt_addr "$i") $(emu_host_ns "$i")-m\n"
  done
  for ((i = 0; i < n; i++)); do
    ns=$(emu_host_ns "$i")
    addr=$(emu_host_addr "$i")
    port=$(emu_host_port "$i")
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$CCB_EMU_BR_NS" link add "$port" type veth peer name "$EMU_HOST_IF" netns "$ns"
    if ((leaves > 0)); then
      ip -n "$CCB_EMU_BR_NS" link set "$port" master "$(emu_leaf_bridge $((i * leaves / n)))"
    else
      ip -n "$CCB_EMU_BR_NS" link set "$port" master "$CCB_EMU_BRIDGE"
    fi
    ip -n "$CCB_EMU_BR_NS" link set "$port" up
    ip -n "$ns" addr add "$addr/24" dev "$EMU_HOST_IF"
    ip -n "$ns" link set "$EMU_HOST_IF" up
    emu_tbf "$ns" "$EMU_HOST_IF" "$rate"
    emu_tbf "$CCB_EMU_BR_NS" "$port" "$rate"
    ip -n "$CCB_EMU_BR_NS" link add "$(emu_host_mgmt_port "$i")" type veth peer name "$EMU_HOST_MGMT_IF" netns "$ns"
    ip -n "$CCB_EMU_BR_NS" link set "$(emu_host_mgmt_port "$i")" master "$CCB_EMU_MGMT_BRIDGE"
    ip -n "$CCB_EMU_BR_NS" link set "$(emu_host_mgmt_port "$i")" up
    ip -n "$ns" addr add "$(emu_host_mgmt_addr "$i")/24" dev "$EMU_HOST_MGMT_IF"
    ip -n "$ns" link set "$EMU_HOST_MGMT_IF" up
    echo "$ns $addr $(emu_host_mgmt_addr "$i")" >>"$CCB_EMU_STATE/hosts"
  done
  # `ip netns exec NS` bind-mounts /etc/netns/NS/* over /etc: every namespace resolves host names.
  for ns in "$CCB_EMU_BR_NS" $(awk '{print $1}' "$CCB_EMU_STATE/hosts"); do
    mkdir -p "/etc/netns/$ns"
    printf '%b' "$hosts" >"/etc/netns/$ns/hosts"
  done
  echo "$rate" >"$CCB_EMU_STATE/rate"
  if ((leaves > 0)); then
    echo "leaf-spine $leaves $uplink_rate" >"$CCB_EMU_STATE/topology"
  else
    echo "flat" >"$CCB_EMU_STATE/topology"
  fi
  for ((l = 0; l < leaves; l++)); do
    local tries=0
    until bridge -n "$CCB_EMU_BR_NS" link show dev "$(emu_uplink_leaf_port "$l")" | grep -q 'state forwarding' &&
      bridge -n "$CCB_EMU_BR_NS" link show dev "$(emu_uplink_spine_port "$l")" | grep -q 'state forwarding'; do
      ((++tries > 50)) && emu_die "the uplink of leaf $l does not come up"
      sleep 0.1
    done
  done
  # The links come up asynchronously: wait until every host's link is up and its bridge port forwards.
  for ((i = 0; i < n; i++)); do
    local tries=0
    until ip -n "$(emu_host_ns "$i")" -o link show dev "$EMU_HOST_IF" | grep -q 'LOWER_UP' &&
      ip -n "$(emu_host_ns "$i")" -o link show dev "$EMU_HOST_MGMT_IF" | grep -q 'LOWER_UP' &&
      bridge -n "$CCB_EMU_BR_NS" link show dev "$(emu_host_port "$i")" | grep -q 'state forwarding' &&
      bridge -n "$CCB_EMU_BR_NS" link show dev "$(emu_host_mgmt_port "$i")" | grep -q 'state forwarding'; do
      ((++tries > 50)) && emu_die "the link of $(emu_host_ns "$i") does not come up"
      sleep 0.1
    done
  done
}

# emu_require_count NAME VALUE MIN MAX: VALUE must be a whole number in MIN..MAX, checked as digits
# before any arithmetic (bash evaluates $(...) hidden in an operand of (( )), $(( )) or [[ -gt ]]).
emu_require_count() {
  [[ $2 =~ ^[0-9]{1,6}$ ]] && ((10#$2 >= $3 && 10#$2 <= $4)) || emu_die "$1 must be a whole number $3..$4, got '$2'"
}

emu_host_count() { [[ -f $CCB_EMU_STATE/hosts ]] && wc -l <"$CCB_EMU_STATE/hosts" || echo 0; }

# Leaves of the fabric that is up (0: flat).
emu_leaf_count() {
  local t l
  read -r t l _ <"$CCB_EMU_STATE/topology" 2>/dev/null || { echo 0; return; }
  [[ $t == leaf-spine ]] && echo "$l" || echo 0
}

# emu_leaf_hosts L: the host names behind leaf L of the fabric that is up, space-separated.
emu_leaf_hosts() {
  local n leaves i out=()
  n=$(emu_host_count)
  leaves=$(emu_leaf_count)
  ((leaves > 0)) || emu_die "the fabric that is up is flat (no leaves)"
  for ((i = 0; i < n; i++)); do
    ((i * leaves / n == $1)) && out+=("$(emu_host_ns "$i")")
  done
  echo "${out[*]}"
}

# emu_set_uplink_rate RATE [LEAF...]: change the uplink rate of some leaves (default all), both directions.
emu_set_uplink_rate() {
  local rate=$1 l leaves
  shift
  leaves=$(emu_leaf_count)
  ((leaves > 0)) || emu_die "the fabric that is up is flat: no uplinks (use a leaf-spine profile)"
  local idx=("$@")
  if [[ ${#idx[@]} -eq 0 ]]; then
    for ((l = 0; l < leaves; l++)); do idx+=("$l"); done
  fi
  for l in "${idx[@]}"; do
    emu_require_count "LEAF_INDEX" "$l" 0 $((leaves - 1))
    emu_tbf "$CCB_EMU_BR_NS" "$(emu_uplink_leaf_port "$l")" "$rate"
    emu_tbf "$CCB_EMU_BR_NS" "$(emu_uplink_spine_port "$l")" "$rate"
  done
  echo "leaf-spine $leaves $rate" >"$CCB_EMU_STATE/topology"
}

# emu_set_rate RATE [HOST_INDEX...]: change the link rate of some hosts (default all), both directions.
emu_set_rate() {
  local rate=$1 i
  shift
  local idx=("$@")
  if [[ ${#idx[@]} -eq 0 ]]; then
    for ((i = 0; i < $(emu_host_count); i++)); do idx+=("$i"); done
  fi
  for i in "${idx[@]}"; do
    emu_require_count "HOST_INDEX" "$i" 0 63
    emu_tbf "$(emu_host_ns "$i")" "$EMU_HOST_IF" "$rate"
    emu_tbf "$CCB_EMU_BR_NS" "$(emu_host_port "$i")" "$rate"
  done
  # The fabric's rate is what every link has; after a change to some links it is "mixed" (status
  # prints each link's own).
  if [[ $# -eq 0 ]]; then echo "$rate" >"$CCB_EMU_STATE/rate"; else echo mixed >"$CCB_EMU_STATE/rate"; fi
}

# Bytes sent through each link's shapers since they were (re)placed, one line per host:
# "ccb-h0 up=BYTES down=BYTES" (up: host -> bridge, down: bridge -> host).
emu_link_bytes() {
  local i
  for ((i = 0; i < $(emu_host_count); i++)); do
    local up down
    up=$(tc -n "$(emu_host_ns "$i")" -s qdisc show dev "$EMU_HOST_IF" | awk '/Sent/ {print $2; exit}')
    down=$(tc -n "$CCB_EMU_BR_NS" -s qdisc show dev "$(emu_host_port "$i")" | awk '/Sent/ {print $2; exit}')
    echo "$(emu_host_ns "$i") up=${up:-0} down=${down:-0}"
  done
}

# Bytes sent through each leaf's uplink shapers, one line per leaf (nothing on a flat fabric):
# "ccb-lf0 up=BYTES down=BYTES" (up: leaf -> spine, down: spine -> leaf).
emu_uplink_bytes() {
  local l leaves
  leaves=$(emu_leaf_count)
  for ((l = 0; l < leaves; l++)); do
    local up down
    up=$(tc -n "$CCB_EMU_BR_NS" -s qdisc show dev "$(emu_uplink_leaf_port "$l")" | awk '/Sent/ {print $2; exit}')
    down=$(tc -n "$CCB_EMU_BR_NS" -s qdisc show dev "$(emu_uplink_spine_port "$l")" | awk '/Sent/ {print $2; exit}')
    echo "$(emu_leaf_bridge "$l") up=${up:-0} down=${down:-0} ($(emu_leaf_hosts "$l"))"
  done
}

# What this fabric has on the machine right now (empty output = nothing).
# Each line is a pipeline whose grep finds nothing on a clean machine: `|| true`, or under the
# callers' `set -eo pipefail` the function stopped there, printed nothing and returned 1.
emu_leftovers() {
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${CCB_EMU_PREFIX}-" | sed 's/^/namespace /' || true
  ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^${CCB_EMU_PREFIX}(-|0)" |
    sed 's/^/link (root namespace) /' || true
  compgen -G "/etc/netns/${CCB_EMU_PREFIX}-*" | sed 's/^/file /' || true
  if [[ -e $CCB_EMU_STATE ]]; then echo "state $CCB_EMU_STATE"; fi
  return 0
}

# The rate of the tbf qdisc on a device ("400Mbit"), or "none" when it has none.
emu_qdisc_rate() {
  local r
  r=$(tc -n "$1" qdisc show dev "$2" 2>/dev/null | awk '{for (k = 1; k < NF; k++) if ($k == "rate") {print $(k + 1); exit}}')
  echo "${r:-none}"
}

# One line per link, named, with its state and the rate of each direction:
# "ccb-h0 link up up=400Mbit down=220Mbit" (up: host -> bridge, down: bridge -> host); a link set
# down with `link down` says "down"; leaf-spine uplinks follow as "ccb-lf0 uplink up=... down=...".
emu_link_status() {
  local i l ns state
  for ((i = 0; i < $(emu_host_count); i++)); do
    ns=$(emu_host_ns "$i")
    state=down
    if ip -n "$ns" -o link show dev "$EMU_HOST_IF" 2>/dev/null | grep -qE '<([^>]*,)?UP[,>]'; then state=up; fi
    echo "$ns link $state up=$(emu_qdisc_rate "$ns" "$EMU_HOST_IF") down=$(emu_qdisc_rate "$CCB_EMU_BR_NS" "$(emu_host_port "$i")")"
  done
  for ((l = 0; l < $(emu_leaf_count); l++)); do
    echo "$(emu_leaf_bridge "$l") uplink up=$(emu_qdisc_rate "$CCB_EMU_BR_NS" "$(emu_uplink_leaf_port "$l")")" \
      "down=$(emu_qdisc_rate "$CCB_EMU_BR_NS" "$(emu_uplink_spine_port "$l")")"
  done
}

# emu_mpirun NP HOSTS_SPEC ARGS...: mpirun from the bridge namespace, ranks in the host namespaces,
# control traffic (oob) on the management network.
# HOSTS_SPEC is Open MPI's --host list, e.g. "ccb-h0:1,ccb-h1:1". Traffic between hosts is forced
# onto TCP over the shaped links; ranks on the same emulated host use shared memory (vader), as
# they would on a real node.
emu_mpirun() {
  local np=$1 hosts=$2
  shift 2
  local btl=${CCB_EMU_BTL:-self,vader,tcp}
  local extra=()
  # shellcheck disable=SC2206
  [[ -n ${CCB_EMU_MPIRUN_ARGS:-} ]] && extra=($CCB_EMU_MPIRUN_ARGS)
  ip netns exec "$CCB_EMU_BR_NS" mpirun --allow-run-as-root -np "$np" --host "$hosts" "${extra[@]}" \
    --mca plm_rsh_agent "$CCB_EMU_DIR/agent.sh" --mca plm_rsh_no_tree_spawn 1 \
    --mca pml ob1 --mca btl "$btl" \
    --mca btl_tcp_if_include "${CCB_EMU_SUBNET}.0/24" --mca oob_tcp_if_include "${CCB_EMU_MGMT_SUBNET}.0/24" \
    --bind-to none "$@"
}

# Rate text (tc syntax) -> Gbit/s, for --link-gbps: 400mbit -> 0.4, 1gbit -> 1, 2500kbit -> 0.0025.
emu_rate_gbps() {
  local r=${1,,}
  awk -v r="$r" 'BEGIN {
    if (match(r, /^[0-9.]+/) == 0) { print "nan"; exit }
    v = substr(r, 1, RLENGTH); u = substr(r, RLENGTH + 1)
    f["gbit"] = 1; f["mbit"] = 1e-3; f["kbit"] = 1e-6; f["bit"] = 1e-9; f[""] = 1e-9
    f["gbps"] = 8; f["mbps"] = 8e-3; f["kbps"] = 8e-6; f["bps"] = 8e-9
    if (!(u in f)) { print "nan"; exit }
    printf "%g\n", v * f[u] }'
}

# emu_profile FILE KEY: a value of a flat fabric profile (configs/fabrics/*.yaml).
emu_profile() {
  local v
  v=$(sed -n -E "s/^$2:[[:space:]]*\"?([^\"#]*[^\"#[:space:]])\"?[[:space:]]*(#.*)?$/\1/p" "$1" | head -1)
  echo "$v"
}

# emu_profile_check FILE: every line is blank, a comment or `key: value` with a key we know, so that
# a misspelt key (uplink-rate) is an error, not a silently flat fabric.
CCB_EMU_PROFILE_KEYS="name generation rate link_gbps path topology leaves uplink_rate hosts"
emu_profile_check() {
  local line n=0 key
  while IFS= read -r line || [[ -n $line ]]; do
    n=$((n + 1))
    [[ $line =~ ^[[:space:]]*(#.*)?$ ]] && continue
    [[ $line =~ ^([A-Za-z_][A-Za-z0-9_-]*):[[:space:]] || $line =~ ^([A-Za-z_][A-Za-z0-9_-]*):$ ]] ||
      emu_die "$1:$n: not a 'key: value' line: '$line'"
    key=${BASH_REMATCH[1]}
    [[ " $CCB_EMU_PROFILE_KEYS " == *" $key "* ]] || emu_die "$1:$n: unknown key '$key' (known: $CCB_EMU_PROFILE_KEYS)"
  done <"$1"
}

# emu_profile_path NAME|FILE -> the profile file.
emu_profile_path() {
  if [[ -f $1 ]]; then echo "$1"; return; fi
  local f="$CCB_EMU_ROOT/configs/fabrics/$1.yaml"
  [[ -f $f ]] || emu_die "no fabric profile '$1' (looked for $1 and $f)"
  echo "$f"
}

# emu_exec CMD...: CMD in the launcher's namespace (ccb-br) with Open MPI's settings of emu_mpirun as
# environment variables, so that an unmodified `mpirun --host ccb-h0:1,ccb-h3:1 ...` (or a program
# that starts mpirun itself, such as `ccbench screen`) reaches the emulated hosts.
emu_exec() {
  exec ip netns exec "$CCB_EMU_BR_NS" env \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMPI_MCA_plm_rsh_agent="$CCB_EMU_DIR/agent.sh" OMPI_MCA_plm_rsh_no_tree_spawn=1 \
    OMPI_MCA_pml=ob1 OMPI_MCA_btl="${CCB_EMU_BTL:-self,vader,tcp}" \
    OMPI_MCA_btl_tcp_if_include="${CCB_EMU_SUBNET}.0/24" OMPI_MCA_oob_tcp_if_include="${CCB_EMU_MGMT_SUBNET}.0/24" \
    OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_rmaps_base_oversubscribe=1 \
    OMPI_MCA_coll_tuned_use_dynamic_rules="${OMPI_MCA_coll_tuned_use_dynamic_rules:-1}" \
    OMPI_MCA_coll_tuned_allreduce_algorithm="${OMPI_MCA_coll_tuned_allreduce_algorithm:-2}" \
    "$@"
}

# emu_stop_ranks HOST_INDEX SECONDS: SIGSTOP every ccbench process that appears in the host's
# namespace (ccbench or the ccbench-measure it execs: a rank that hangs without dying), until killed, or for SECONDS when not 0. The stopped
# ranks stay stopped; whoever ends the job (the launcher, `down`) kills them.
emu_stop_ranks() {
  local ns p end=0
  ns=$(emu_host_ns "$1")
  ip netns pids "$ns" >/dev/null 2>&1 || emu_die "no emulated host $ns"
  [[ $2 -gt 0 ]] && end=$((SECONDS + $2))
  while [[ $end -eq 0 || $SECONDS -lt $end ]]; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do
      [[ $(cat "/proc/$p/comm" 2>/dev/null) == ccbench* ]] || continue  # ccbench run execs ccbench-measure
      [[ $(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) == T ]] && continue
      kill -STOP "$p" 2>/dev/null && emu_log "stopped ccbench pid $p on $ns"
    done
    sleep 0.05
  done
}
