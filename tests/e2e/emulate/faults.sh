#!/bin/bash
# Fault injection across emulated hosts, mid-run, once at least 3 sizes have finished:
#   faults.sh link-down     2 hosts x 1 rank: host 1's data link set down  -> exit 3 (watchdog)
#   faults.sh kill-remote   2 hosts x 1 rank: rank 1 (other host) SIGKILL  -> mpirun's own code 137
#   faults.sh kill-local    2 hosts x 2 ranks: rank 1 (rank 0's host) SIGKILL -> result file exit 4
#   faults.sh stop-remote   2 hosts x 1 rank: rank 1 SIGSTOP               -> exit 3 (watchdog)
#   faults.sh stop-local    2 hosts x 2 ranks: rank 1 SIGSTOP              -> exit 3, names the stopped rank
# Each: the run ends within the watchdog's time (+ the launcher's teardown), stderr names what
# failed, and every finished size is in the result file and its JSON-lines stream.
source "$(dirname "$0")/common.sh"
fault=${1:?fault name}
T=5              # ccbench's watchdog (-T)
slack=10         # what mpirun may add to tear the job down
hosts=2 rph=1
case $fault in kill-local|stop-local) rph=2 ;; esac
json=$WORK/out.json
jsonl=$WORK/out.jsonl

emu_up "$hosts" 400mbit
spec="$P-h0:$rph,$P-h1:$rph"

# rank_pid RANK: pid of that ccbench rank (found through its namespace, killed by pid).
rank_pid() {
  local ns p
  for ns in $(awk '{print $1}' "$CCB_EMU_STATE/hosts"); do
    for p in $(ip netns pids "$ns"); do
      [[ $(cat "/proc/$p/comm" 2>/dev/null) == ccbench ]] || continue
      tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && { echo "$p"; return; }
    done
  done
}

inject() {
  case $fault in
    link-down) ip -n $P-h1 link set "$EMU_HOST_IF" down ;;
    kill-remote|kill-local) kill -KILL "$(rank_pid 1)" ;;
    stop-remote|stop-local) kill -STOP "$(rank_pid 1)" ;;
  esac
}

(
  for _ in $(seq 600); do
    [[ $(cat "$jsonl" 2>/dev/null | wc -l) -ge 3 ]] && break
    sleep 0.1
  done
  inject
  date +%s.%N >"$WORK/injected_at"
  echo "injected $fault at $(cat "$WORK/injected_at")" >&2
) &
injector=$!

rc=0
timeout 120 bash -c "source '$ROOT/scripts/emulate/lib.sh'; emu_mpirun $((hosts * rph)) $spec '$CCBENCH' run \
  --ops allreduce -b 256K -e 16M --in-place no -w 1 -n 3 -T $T --progress never -J '$json'" >"$WORK/log" 2>&1 || rc=$?
end=$(date +%s.%N)
wait "$injector" || true
cat "$WORK/log"
[[ -f $WORK/injected_at ]] || fail "the fault was never injected"
elapsed=$(awk -v a="$(cat "$WORK/injected_at")" -v b="$end" 'BEGIN {printf "%.1f", b - a}')
echo "measured: $fault: launcher exit $rc, ended ${elapsed}s after the fault (watchdog -T $T)"
[[ $rc -ne 124 ]] || fail "the run hung: killed by timeout 120 s"
awk -v e="$elapsed" -v m=$((T + slack)) 'BEGIN {exit !(e <= m)}' || fail "ended ${elapsed}s after the fault, more than $T+$slack s"

# The result file: final status, exit code, error; every finished size kept, and the same rows in
# the JSON-lines stream.
read -r status code nres nlines error < <(py "
d = json.load(open('$json')); r = d['run']
lines = [json.loads(l) for l in open('$jsonl') if l.strip()]
print(r['status'], r['exit_code'], len(d['results']), len(lines), (r['error'] or '').replace(' ', '_'))")
echo "measured: result file status=$status exit_code=$code results=$nres jsonl_rows=$nlines error=${error//_/ }"
[[ $nres -ge 3 ]] || fail "only $nres results kept (at least 3 had finished)"
[[ $nlines -eq $nres ]] || fail "result file has $nres rows but the JSON-lines stream $nlines"
py "
d = json.load(open('$json')); rows = d['results']
sizes = [r['bytes'] for r in rows]
assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes), sizes
assert all(r['busbw_gbps'] > 0 and r['samples_us'] for r in rows)
assert not d['run']['finished_at'] == '' " || fail "kept rows are not whole finished sizes"

expect_rc() { [[ $rc -eq $1 ]] || fail "launcher exit $rc, expected $1"; }
expect() { [[ $1 == "$2" ]] || fail "$3: got '$1', expected '$2'"; }
case $fault in
  link-down|stop-remote)
    expect_rc 3
    expect "$code" 3 "result file exit_code"
    expect "$status" incomplete "status"
    grep -q "rank 0: timeout: allreduce of [0-9]* bytes.*did not finish within $T s" "$WORK/log" || fail "no timeout message naming the op"
    ;;
  stop-local)
    expect_rc 3
    expect "$code" 3 "result file exit_code"
    grep -q "rank 1 (pid [0-9]* on $P-h0) is stopped" "$WORK/log" || fail "the stopped rank is not named"
    ;;
  kill-remote)
    # The survivor cannot see a process on another host. Either MPI reports the broken connection
    # to rank 0 first (it saves its results as 'failed', exit 4), or mpirun ends the job first
    # (SIGTERM to rank 0, which saves them as 'interrupted', 143): a race, both are right.
    expect_rc 137
    case "$code/$status" in
      4/failed | 143/interrupted) ;;
      *) fail "result file $status/$code, expected failed/4 or interrupted/143" ;;
    esac
    grep -q "process rank 1 with PID [0-9]* on node $P-h1 exited on signal 9" "$WORK/log" || fail "mpirun did not name the killed rank"
    ;;
  kill-local)
    expect_rc 137
    expect "$code" 4 "result file exit_code"
    expect "$status" failed "status"
    grep -q "peer failed: rank 1 (pid [0-9]* on $P-h0) exited" "$WORK/log" || fail "rank 0 did not name the dead peer"
    ;;
  *) fail "unknown fault $fault" ;;
esac
ok "$fault: exit $rc, result file $status/$code with $nres finished results"
