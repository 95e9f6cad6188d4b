#!/bin/bash
# Open MPI launch agent (--mca plm_rsh_agent) for the emulated fabric: used like ssh,
# `agent.sh HOST COMMAND...`, it runs COMMAND (Open MPI's orted) inside the emulated host HOST:
# its network namespace (ip netns exec) and a UTS namespace whose hostname is HOST, so every rank
# on it reports that host name. HOST is a namespace name (ccb-h0) or its address (10.213.0.1).
set -euo pipefail
# The fabric's state folder as lib.sh derives it from CCB_EMU_PREFIX (and CCB_EMU_STATE).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
state=$CCB_EMU_STATE
host=$1
shift
# ssh options Open MPI may pass before the host (none for a custom agent, but be lenient).
while [[ $host == -* ]]; do host=$1; shift; done
ns=$(awk -v h="$host" '$1 == h || $2 == h || $3 == h || $1 "-m" == h {print $1; exit}' "$state/hosts" 2>/dev/null || true)
if [[ -z $ns ]]; then
  echo "agent.sh: '$host' is not an emulated host (see $state/hosts; is the fabric up?)" >&2
  exit 255
fi
# Like ssh, the remote side gets one command line for a shell.
exec ip netns exec "$ns" unshare --uts -- /bin/sh -c 'hostname "$0" && exec /bin/sh -c "$1"' "$ns" "$*"
