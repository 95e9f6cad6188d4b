#!/usr/bin/env bash
# s3.sh up's arguments are checked before anything starts (issue 27 item 14): a bucket name S3
# refuses (a..b, one that ends in '-', an IP address, too short) and a flag without its value are
# exit 2 in one line naming the flag, and leave no state folder and no server running (a..b used to
# pass the check, start the five servers, fail at create-bucket and leave them running; a flag
# without a value was a raw bash error). No server is needed: under a second when it passes.
set -uo pipefail
s3=$(cd "$(dirname "$0")/../../.." && pwd)/scripts/emulate/s3.sh
state=/run/ccbench-s3-sh-$$
export CCB_S3_STATE=$state CCB_S3_PORT=8780
fail() { echo "FAIL: $*"; exit 1; }
cleanup() { [[ ! -d $state ]] || timeout 60 "$s3" down >/dev/null 2>&1; }
trap cleanup EXIT
expect_2() {  # FLAG ARGS...
  local flag=$1 out rc
  shift
  out=$(timeout 120 "$s3" up "$@" 2>&1)
  rc=$?
  [[ $rc == 2 && $(wc -l <<<"$out") == 1 && $out == "s3: error: "*"$flag"* ]] ||
    fail "up $*: exit $rc, '$out' (want exit 2, one line naming $flag)"
  [[ ! -e $state ]] || fail "up $*: left $state (servers: $(ls "$state/pids" 2>/dev/null | paste -sd' '))"
  ! pgrep -f "$state/etc" >/dev/null || fail "up $*: a server of $state runs"
  echo "ok: up $*: $out"
}
expect_2 --bucket --bucket a..b
expect_2 --bucket --bucket ab-
expect_2 --bucket --bucket 10.0.0.1
expect_2 --bucket --bucket ab
expect_2 --bucket --bucket a.-b
expect_2 --bucket --bucket
expect_2 --host --host
expect_2 --ram --ram
expect_2 --nice --nice
expect_2 --ram --ram --bucket ckpt
echo PASS
