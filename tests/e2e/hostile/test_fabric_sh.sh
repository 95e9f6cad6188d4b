#!/usr/bin/env bash
# fabric.sh on a clean machine and after partial changes (issue 23): `leftovers` prints "none" and
# exits 0 when nothing of the fabric is there (it printed nothing and exited 1); `status` names
# each link with its state and the rate of each direction after `set-rate` changed one link and
# `link down` took another down (it printed one rate and no down link).
# Uses a prefix of this run's own (r + its PID) and subnets of its own (10.215.0-1), so it never
# meets another fabric's.
# Usage: test_fabric_sh.sh FABRIC_SH   (root, iproute2; exit 77 to skip otherwise)
set -uo pipefail
fabric=$(readlink -f "$1")
export CCB_EMU_PREFIX=r$$ CCB_EMU_SUBNET=10.215.0 CCB_EMU_MGMT_SUBNET=10.215.1 CCB_EMU_STATE=/run/ccbench-emulate-r$$
P=$CCB_EMU_PREFIX
source "$(dirname "$fabric")/lib.sh"
set +e
emu_require_or_skip
fail() { echo "fabric-sh-test: FAILED: $*"; "$fabric" down >/dev/null 2>&1; exit 1; }
"$fabric" down >/dev/null 2>&1

out=$("$fabric" leftovers 2>&1)
rc=$?
[[ $rc == 0 && $out == none ]] || fail "leftovers on a clean machine: exit $rc, '$out'"

"$fabric" up --hosts 3 --rate 400mbit >/dev/null 2>&1 || fail "up"
trap '"$fabric" down >/dev/null 2>&1' EXIT
"$fabric" set-rate 220mbit 1 >/dev/null 2>&1 || fail "set-rate"
"$fabric" link down 2 >/dev/null 2>&1 || fail "link down"
status=$("$fabric" status 2>&1) || fail "status: exit $?"
want="$P-h0 link up up=400Mbit down=400Mbit
$P-h1 link up up=220Mbit down=220Mbit
$P-h2 link down up=400Mbit down=400Mbit"
got=$(grep ' link ' <<<"$status")
[[ $got == "$want" ]] || fail "status links:
$got
expected:
$want"
grep -qx 'rate: mixed' <<<"$status" || fail "status rate line: $(grep '^rate' <<<"$status")"

out=$("$fabric" leftovers 2>&1)
[[ $out == *"namespace $P-h0"* ]] || fail "leftovers with the fabric up: '$out'"
"$fabric" down >/dev/null 2>&1 || fail "down"
trap - EXIT
out=$("$fabric" leftovers 2>&1)
[[ $? == 0 && $out == none ]] || fail "leftovers after down: '$out'"
echo "fabric-sh-test: PASS"
