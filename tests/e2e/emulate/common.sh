# shellcheck shell=bash
# Shared by the emulated-fabric e2e tests: skip (77) when the machine cannot host the fabric,
# always tear down, small assertions.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
source "$ROOT/scripts/emulate/lib.sh"
export CCBENCH=${CCBENCH:-$ROOT/build/ccbench}
if [[ ! -x $CCBENCH ]]; then echo "SKIP: no ccbench binary at $CCBENCH (set CCBENCH)"; exit 77; fi
emu_require_or_skip
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ccb-emu-test.XXXXXX")
# Tests of this folder share the namespace names: ctest runs them one at a time (RESOURCE_LOCK).
trap 'emu_down; rm -rf "$WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
# py EXPR...: run python3 with json loaded; prints the result.
py() { python3 -c "import json, sys; $1"; }
