#!/bin/bash
# A real S3 server for `ccbench checkpoint --target s3://` (docs/checkpoint.md, "S3 engine"):
# OpenStack Swift (Debian's 2.30) on one node, its proxy with tempauth and the s3api middleware
# (SigV4 signatures and payload hashes checked as AWS does), account/container/object servers on a
# plain directory, memcached for the proxy's cache. On loopback, or inside an emulated host's
# network namespace (--host PREFIX-hN of scripts/emulate/fabric.sh) so that a shaped link gives the
# upload a known rate. `up` creates the bucket and prints export lines a shell can eval.
set -euo pipefail

# Everything one server owns is keyed by its state directory and its ports, so a test beside a user
# (each with their own values) never touches the other's server.
state=${CCB_S3_STATE:-/run/ccbench-s3}
port=${CCB_S3_PORT:-8480} # proxy; object, container, account, memcached on the next four
region=${CCB_S3_REGION:-us-east-1}

usage() {
  cat <<'USAGE'
usage: scripts/emulate/s3.sh COMMAND [ARGS]
  up [--bucket NAME] [--host PREFIX-hN] [--ram SIZE] [--nice N]
                                          start Swift + s3api (replaces an old one), create the bucket,
                                          print `export AWS_ENDPOINT_URL=... AWS_ACCESS_KEY_ID=...` lines;
                                          --ram: its data on a tmpfs of SIZE (e.g. 1G), not on disk;
                                          --nice: its servers at that nice value (-20..19)
  down                                    stop every process of this server and remove its data
  status                                  the processes and the endpoint
  env                                     print the export lines again
Environment (each server its own): CCB_S3_STATE (/run/ccbench-s3: config, data, logs, pids),
CCB_S3_PORT (8480: the proxy; the object, container, account servers and memcached take the next four),
CCB_S3_REGION (us-east-1: s3api's location, the SigV4 region).
USAGE
}

die() { printf 's3: error: %s\n' "$*" >&2; exit 2; }
log() { printf 's3: %s\n' "$*" >&2; }

[[ $port =~ ^[0-9]+$ ]] && ((port > 0 && port < 65530)) || die "CCB_S3_PORT: expected a port number"

# Swift's hash-path suffix is read from /etc/swift/swift.conf only (not configurable per server):
# it is written once, the same for every server on this machine.
swift_conf() {
  [[ -f /etc/swift/swift.conf ]] && return
  mkdir -p /etc/swift
  cat >/etc/swift/swift.conf <<'EOF'
[swift-hash]
swift_hash_path_suffix = ccbench-emulated-s3
swift_hash_path_prefix = ccbench
[storage-policy:0]
name = Policy-0
default = yes
EOF
}

# Runs CMD in the emulated host's namespace when one was given at `up`.
in_host() {
  local host
  host=$(cat "$state/host" 2>/dev/null || true)
  if [[ -n $host ]]; then ip netns exec "$host" "$@"; else "$@"; fi
}

stop_all() {
  local f pid
  for f in "$state"/pids/*.pid; do
    [[ -f $f ]] || continue
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null || true
  done
  for f in "$state"/pids/*.pid; do
    [[ -f $f ]] || continue
    pid=$(cat "$f")
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$f"
  done
}

server_conf() { # NAME PORT
  cat <<EOF
[DEFAULT]
bind_ip = $addr
bind_port = $2
workers = 0
devices = $state/srv
mount_check = false
disable_fallocate = true
swift_dir = $state/etc
log_name = $1
log_facility = LOG_LOCAL0
[pipeline:main]
pipeline = $1-server
[app:$1-server]
use = egg:swift#$1
[$1-replicator]
[$1-updater]
[$1-auditor]
EOF
}

start() { # NAME CMD...
  local name=$1
  shift
  local host
  host=$(cat "$state/host")
  set -- nice -n "$(cat "$state/nice")" "$@"
  # Not through a function: $! must be the server itself (setsid, ip netns exec and nice all exec).
  if [[ -n $host ]]; then
    setsid ip netns exec "$host" "$@" </dev/null >"$state/log/$name.log" 2>&1 &
  else
    setsid "$@" </dev/null >"$state/log/$name.log" 2>&1 &
  fi
  echo $! >"$state/pids/$name.pid"
}

wait_port() { # PORT
  for _ in $(seq 100); do
    in_host bash -c "exec 3<>/dev/tcp/$addr/$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

print_env() {
  # shellcheck disable=SC1091
  source "$state/env"
  echo "export AWS_ENDPOINT_URL=http://$ADDR:$PORT AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=$SECRET AWS_REGION=$REGION"
  echo "export CCB_S3_BUCKET=$BUCKET"
}

# A signed request through Debian's AWS CLI (never the one first on PATH, which may be another).
aws_cli() {
  # shellcheck disable=SC1091
  source "$state/env"
  AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=$SECRET AWS_REGION=$REGION AWS_CONFIG_FILE=/dev/null \
    AWS_SHARED_CREDENTIALS_FILE=/dev/null in_host /usr/bin/aws --endpoint-url "http://$ADDR:$PORT" "$@"
}

# S3's bucket naming rules, as s3api checks them: 3-63 of [a-z0-9.-], a letter or digit at each end,
# no "..", ".-" or "-.", not an IPv4 address. Checked before anything starts: a name the server
# refuses would otherwise leave its servers running.
valid_bucket() {
  [[ $1 =~ ^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$ && $1 != *..* && $1 != *.-* && $1 != *-.* &&
    ! $1 =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]]
}

cmd_up() {
  local bucket=ccbench host="" ram="" niceness=0
  while (($#)); do
    case $1 in
      --bucket | --host | --ram | --nice)
        [[ $# -ge 2 && -n $2 && $2 != --* ]] || die "up: $1 needs a value (see --help)"
        case $1 in
          --bucket) bucket=$2 ;; --host) host=$2 ;; --ram) ram=$2 ;; --nice) niceness=$2 ;;
        esac
        shift 2 ;;
      *) die "up: unknown argument '$1'" ;;
    esac
  done
  valid_bucket "$bucket" ||
    die "--bucket $bucket: expected 3-63 of [a-z0-9.-], a letter or digit at each end, no '..', '.-' or '-.', not an IP address"
  [[ -z $ram || $ram =~ ^[1-9][0-9]*[KMG]$ ]] || die "--ram $ram: expected a size such as 512M or 2G"
  [[ $niceness =~ ^-?[0-9]+$ ]] && ((niceness >= -20 && niceness <= 19)) || die "--nice $niceness: expected -20..19"
  [[ $(id -u) == 0 ]] || die "needs root (writes /etc/swift/swift.conf once; network namespaces with --host)"
  command -v swift-proxy-server >/dev/null || die "swift-proxy-server not found (apt-get install swift-proxy swift-object swift-container swift-account memcached python3-swift)"
  addr=127.0.0.1
  if [[ -n $host ]]; then
    ip netns list | grep -qw "^$host" || die "--host $host: no such network namespace (scripts/emulate/fabric.sh up)"
    addr=$(ip netns exec "$host" ip -4 -o addr show scope global | awk '{print $4}' | cut -d/ -f1 | head -1)
    [[ -n $addr ]] || die "--host $host: no IPv4 address in the namespace"
  fi
  [[ -d $state ]] && cmd_down_quiet
  mkdir -p "$state"/{etc,srv,log,pids,cache}
  # In memory, Swift's fsyncs cost nothing and the disk's other users cannot stall the server: what
  # a known answer behind a shaped link needs (the link, not this disk, must set the rate). tmpfs
  # keeps user xattrs, where Swift stores an object's metadata (Linux 6.6 and later).
  if [[ -n $ram ]]; then
    mount -t tmpfs -o "size=$ram,mode=0755" ccbench-s3 "$state/srv" ||
      { cmd_down_quiet; die "--ram $ram: mounting a tmpfs on $state/srv failed"; }
  fi
  mkdir -p "$state/srv/d1"
  echo "$host" >"$state/host"
  echo "$niceness" >"$state/nice"
  swift_conf
  local secret
  secret=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  cat >"$state/env" <<EOF
ADDR=$addr
PORT=$port
KEY=ccbench:tester
SECRET=$secret
REGION=$region
BUCKET=$bucket
EOF
  chmod 600 "$state/env"
  local p=$((port + 1)) kind
  for kind in object container account; do
    server_conf "$kind" "$p" >"$state/etc/$kind-server.conf"
    (cd "$state/etc" && swift-ring-builder "$kind.builder" create 4 1 1 >/dev/null &&
      swift-ring-builder "$kind.builder" add "r1z1-$addr:$p/d1" 1 >/dev/null &&
      swift-ring-builder "$kind.builder" rebalance >/dev/null)
    p=$((p + 1))
  done
  cat >"$state/etc/proxy-server.conf" <<EOF
[DEFAULT]
bind_ip = $addr
bind_port = $port
workers = 0
swift_dir = $state/etc
log_name = proxy
[pipeline:main]
pipeline = catch_errors proxy-logging cache s3api tempauth copy slo dlo proxy-logging proxy-server
[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
[filter:catch_errors]
use = egg:swift#catch_errors
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:cache]
use = egg:swift#memcache
memcache_servers = $addr:$((port + 4))
[filter:s3api]
use = egg:swift#s3api
location = $region
[filter:tempauth]
use = egg:swift#tempauth
user_ccbench_tester = $secret .admin
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
EOF
  start memcached memcached -u root -l "$addr" -p $((port + 4)) -U 0
  p=$((port + 1))
  for kind in object container account; do
    start "$kind" "swift-$kind-server" "$state/etc/$kind-server.conf"
    p=$((p + 1))
  done
  start proxy swift-proxy-server "$state/etc/proxy-server.conf"
  for p in $((port + 4)) $((port + 1)) $((port + 2)) $((port + 3)) "$port"; do
    wait_port "$p" || { tail -5 "$state"/log/*.log >&2; cmd_down_quiet; die "a server did not listen on $addr:$p (logs above)"; }
  done
  aws_cli s3api create-bucket --bucket "$bucket" >/dev/null ||
    { tail -5 "$state/log/proxy.log" >&2; cmd_down_quiet; die "create-bucket $bucket failed (the servers are stopped)"; }
  log "Swift s3api on http://$addr:$port (bucket $bucket${host:+, in $host}); state $state"
  print_env
}

cmd_down_quiet() {
  stop_all
  if mountpoint -q "$state/srv" 2>/dev/null; then umount "$state/srv" || umount -l "$state/srv"; fi
  [[ -d $state ]] && rm -rf --one-file-system "${state:?}"/{srv,etc,log,cache,env,host,nice}
  true
}

case ${1:-} in
  up) shift; cmd_up "$@" ;;
  down)
    cmd_down_quiet
    [[ -d $state ]] && rmdir "$state"/pids "$state" 2>/dev/null || true
    log "down ($state)" ;;
  status)
    [[ -f $state/env ]] || { log "not up ($state)"; exit 1; }
    for f in "$state"/pids/*.pid; do
      n=$(basename "$f" .pid)
      if kill -0 "$(cat "$f")" 2>/dev/null; then echo "$n: running (pid $(cat "$f"))"; else echo "$n: not running"; fi
    done
    print_env ;;
  env) [[ -f $state/env ]] || die "not up ($state)"; print_env ;;
  aws) shift; aws_cli "$@" ;;
  -h | --help | help) usage ;;
  *) usage >&2; exit 2 ;;
esac
