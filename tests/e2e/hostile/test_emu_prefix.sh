#!/usr/bin/env bash
# Issue 27 item 16: emulated fabrics of different prefixes never touch each other. A "user's"
# fabric (prefix u + this PID, no CCB_EMU_STATE given) gets a state folder of its prefix's own,
# `fabric.sh exec -- mpirun` reaches its hosts through that state, and an e2e test started from the
# user's shell (CCB_EMU_PREFIX exported) brings up and tears down a fabric of its own prefix while
# the user's stays up. A prefix whose interface names would pass Linux's 15 characters is exit 2
# naming CCB_EMU_PREFIX before anything is made, and `fabric.sh --help` says how to pick one.
# Usage: test_emu_prefix.sh CHECKOUT   (root, iproute2, mpirun; exit 77 to skip otherwise)
set -uo pipefail
root=$(readlink -f "$1")
fabric=$root/scripts/emulate/fabric.sh
user=u$$
unset CCB_EMU_STATE CCB_EMU_TEST_PREFIX
export CCB_EMU_PREFIX=$user
source "$root/scripts/emulate/lib.sh"
set +e
emu_require_or_skip
fail() { echo "emu-prefix-test: FAILED: $*"; exit 1; }
tmp_err=$(mktemp)
trap 'CCB_EMU_PREFIX=$user "$fabric" down >/dev/null 2>&1; rm -f "$tmp_err"' EXIT

# A prefix too long for PREFIX-h63-p (15 characters), and one with a space: one line, exit 2.
for bad in abcdefghij 'a b'; do
  msg=$(CCB_EMU_PREFIX=$bad timeout 30 "$fabric" up --hosts 1 2>&1)
  rc=$?
  [[ $rc == 2 && $msg == *"CCB_EMU_PREFIX '$bad'"* && $(wc -l <<<"$msg") == 1 ]] ||
    fail "CCB_EMU_PREFIX='$bad': exit $rc, '$msg' (want exit 2, one line naming CCB_EMU_PREFIX)"
  ! ip netns list | grep -q "^${bad%% *}-" || fail "CCB_EMU_PREFIX='$bad' left a namespace"
done
"$fabric" --help | grep -q 'CCB_EMU_PREFIX' || fail "fabric.sh --help does not name CCB_EMU_PREFIX"

# The user's fabric: its state is its prefix's, not the default fabric's /run/ccbench-emulate.
timeout 60 "$fabric" up --hosts 2 --rate 400mbit >/dev/null 2>&1 || fail "up with CCB_EMU_PREFIX=$user"
[[ -f /run/ccbench-emulate-$user/hosts ]] || fail "no state at /run/ccbench-emulate-$user (the default fabric's folder?)"
hosts=$(timeout 60 "$fabric" exec -- mpirun -np 2 --host "$user-h0:1,$user-h1:1" hostname 2>"$tmp_err" | sort | paste -sd' ')
[[ $hosts == "$user-h0 $user-h1" ]] || fail "fabric.sh exec -- mpirun hostname gave '$hosts': $(tail -3 "$tmp_err")"

# An e2e test started from the user's shell: a fabric of its own, the user's untouched.
test_out=$(CCBENCH=/bin/true timeout 60 bash -c "source '$root/tests/e2e/emulate/common.sh'
emu_up 2 100mbit
echo \"\$CCB_EMU_PREFIX \$CCB_EMU_STATE \$(emu_host_count)\"" 2>&1)
rc=$?
read -r test_prefix test_state test_hosts <<<"$(tail -1 <<<"$test_out")"
[[ $rc == 0 && $test_hosts == 2 ]] || fail "the test-like run: exit $rc, '$test_out'"
[[ $test_prefix != "$user" && $test_prefix != ccb && $test_state != "$CCB_EMU_STATE" ]] ||
  fail "the test run used prefix $test_prefix, state $test_state (the user's: $user, $CCB_EMU_STATE)"
! ip netns list | grep -q "^$test_prefix-" || fail "the test run left namespaces of $test_prefix"
ip netns list | grep -q "^$user-h1" && [[ -f $CCB_EMU_STATE/hosts ]] ||
  fail "the user's fabric $user did not survive the test run"
"$fabric" down >/dev/null 2>&1 || fail "down"
trap - EXIT
rm -f "$tmp_err"
[[ $("$fabric" leftovers) == none ]] || fail "leftovers after down: $("$fabric" leftovers)"
echo "emu-prefix-test: PASS (user $user, test run $test_prefix)"
