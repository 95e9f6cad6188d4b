# shellcheck shell=bash
# Shared by the emulated-fabric e2e tests: skip (77) when the machine cannot host the fabric,
# always tear down, small assertions.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
# A fabric prefix of this run's own, from its PID, whatever the shell exported: two runs, or a run
# beside a user's fabric (ccb, or a prefix the user picked), never meet. "t" and up to 7 digits fit
# lib.sh's limit of 9. CCB_EMU_TEST_PREFIX picks one by hand.
export CCB_EMU_PREFIX=${CCB_EMU_TEST_PREFIX:-t$$}
export CCB_EMU_STATE=/run/ccbench-emulate-$CCB_EMU_PREFIX
source "$ROOT/scripts/emulate/lib.sh"
P=$CCB_EMU_PREFIX
export CCBENCH=${CCBENCH:-$ROOT/build/ccbench}
if [[ ! -x $CCBENCH ]]; then echo "SKIP: no ccbench binary at $CCBENCH (set CCBENCH)"; exit 77; fi
emu_require_or_skip
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ccb-emu-test.XXXXXX")
# ctest still runs these tests one at a time (RESOURCE_LOCK): for the CPU, no longer for names.
trap 'emu_down; rm -rf "$WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
# py EXPR...: run python3 with json loaded; prints the result.
py() { python3 -c "import json, sys; $1"; }
