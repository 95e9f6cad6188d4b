#!/bin/bash
# Teardown leaves nothing behind: after a normal run, after a failed run, after a run killed with
# SIGKILL (then 'fabric.sh down' cleans up), and 'up' replaces a fabric left over.
source "$(dirname "$0")/common.sh"
fabric=$ROOT/scripts/emulate/fabric.sh
check_clean() {
  local left
  left=$(emu_leftovers)
  [[ -z $left ]] || fail "$1: left behind: $left"
  # Nothing of ours in the root namespace either: no link, no qdisc, no address.
  ! ip -o link show | grep -q " $P" || fail "$1: a $P link in the root namespace"
  ! ip -o addr show | grep -q "10\.213\." || fail "$1: a 10.213. address in the root namespace"
  ! tc qdisc show | grep -q "tbf" || fail "$1: a tbf qdisc in the root namespace"
  ok "$1: clean"
}

"$fabric" run --hosts 2 --rate 800mbit -- --ops allreduce -b 1M -e 1M -n 3 --progress never -J "$WORK/a.json" >"$WORK/log" 2>&1 ||
  { cat "$WORK/log"; fail "a normal run failed"; }
grep -q "$P-h0 up=[1-9]" "$WORK/log" || fail "no bytes went through $P-h0's shaped link"
grep "emulate:   $P-h" "$WORK/log"
check_clean "after a normal run"

rc=0
"$fabric" run --hosts 2 -- --no-such-flag >"$WORK/log" 2>&1 || rc=$?
[[ $rc -eq 2 ]] || { cat "$WORK/log"; fail "a usage error gave exit $rc, expected 2"; }
check_clean "after a failed run"

setsid "$fabric" run --hosts 3 -- --ops allreduce -b 8M -e 8M -n 50 --progress never -J "$WORK/b.json" >"$WORK/log" 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -f $WORK/b.jsonl ]] && break; sleep 0.1; done
kill -KILL -- "-$pid"   # the whole process group of that run: fabric.sh, mpirun and its agents
wait "$pid" 2>/dev/null || true
[[ -n $(emu_leftovers) ]] || fail "expected leftovers after SIGKILL"
"$fabric" down
check_clean "after SIGKILL and 'fabric.sh down'"

"$fabric" up --hosts 2 --rate 100mbit
"$fabric" up --hosts 3 --profile emulated-v4
[[ $(emu_host_count) -eq 3 ]] || fail "up did not replace the old fabric"
tc -n $P-h2 qdisc show dev "$EMU_HOST_IF" | grep -q "rate 472Mbit" || fail "profile rate not applied"
"$fabric" set-rate 300mbit 1
tc -n $CCB_EMU_BR_NS qdisc show dev $P-h1-p | grep -q "rate 300Mbit" || fail "set-rate did not shape the bridge side"
tc -n $P-h1 qdisc show dev "$EMU_HOST_IF" | grep -q "rate 300Mbit" || fail "set-rate did not shape the host side"
"$fabric" down
check_clean "after up, up, set-rate, down"
