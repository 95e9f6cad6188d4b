#!/bin/bash
# Known answers for --require-path on the MPI backend (docs/path-proof.md): 2 emulated hosts, one
# rank each, links at 1 Gbit/s.
#   net     the ranks on two hosts: the hosts' interface counters explain their off-host bytes,
#           proven (exit 0, fabric.proof.verdict proven, every host's share >= 0.9)
#   onehost both ranks on one host (shared memory): refused by --require-path net at the first
#           size, exit 6 naming the host, the rows kept and marked, status failed
#   shm     --require-path shm on the two-host job: refused, the bytes crossed a NIC, exit 6
#   path_proof.sh net | onehost | shm
source "$(dirname "$0")/common.sh"
case_name=${1:-net}
fabric=$ROOT/scripts/emulate/fabric.sh
"$fabric" up --hosts 2 --rate 1gbit 2>"$WORK/up.log" || { cat "$WORK/up.log"; fail "fabric up failed"; }

case $case_name in
  net) hosts="$P-h0:1,$P-h1:1" require=net want=0 ;;
  onehost) hosts="$P-h0:2" require=net want=6 ;;
  shm) hosts="$P-h0:1,$P-h1:1" require=shm want=6 ;;
  *) fail "unknown case $case_name (net, onehost or shm)" ;;
esac
rc=0
start=$(date +%s)
timeout 120 "$fabric" exec -- mpirun -np 2 --host "$hosts" "$CCBENCH" run --ops allreduce,allgather -b 1M -e 8M \
  -w 2 -n 5 --progress never --require-path $require -J "$WORK/r.json" >"$WORK/run.log" 2>&1 || rc=$?
took=$(($(date +%s) - start))
cat "$WORK/run.log"
[[ $rc -eq $want ]] || fail "$case_name: mpirun ccbench run --require-path $require exited $rc, expected $want"
ok "$case_name: exit $rc in ${took}s"

/usr/bin/python3 - "$WORK/r.json" "$case_name" "$P" <<'PY' || fail "$case_name: the result file's proof"
import json, sys
path, case, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
d = json.load(open(path))
proof = d["fabric"]["proof"]
print("fabric.proof:", json.dumps(proof)[:400])
rows = d["results"]
if case == "net":
    assert proof["required"] == "net" and proof["verdict"] == "proven", proof
    run = proof["run"]
    assert run["source"] == "interface counters" and run["carried_by"] == "net", run
    hosts = run["evidence"]["hosts"]
    assert sorted(h["host"] for h in hosts) == [prefix + "-h0", prefix + "-h1"], hosts
    for h in hosts:
        assert h["off_host_rx_bytes"] > 0 and h["explained"] >= 0.9, h
    assert d["run"]["status"] == "complete" and d["run"]["exit_code"] == 0
    assert len(rows) == 16 and all("path_proof" not in r for r in rows), len(rows)
else:
    assert proof["verdict"] == "failed", proof
    assert d["run"]["status"] == "failed" and d["run"]["exit_code"] == 6, d["run"]
    assert d["run"]["error"] == proof["probe"]["message"], (d["run"]["error"], proof)
    # Stopped at the probe after the first size: its rows kept (out-of-place, in-place), marked.
    assert len(rows) == 2 and all(r["path_proof"] == "failed" for r in rows), rows
    assert proof["probe"]["host"] == prefix + "-h0", proof["probe"]
    carried = {"onehost": "shm", "shm": "net"}[case]
    assert proof["probe"]["carried_by"] == carried, proof["probe"]
PY
case $case_name in
  onehost) grep -q "ccbench run: --require-path net: every rank is on host $P-h0: no byte had to cross a network" "$WORK/run.log" ||
    fail "onehost: no one-line message naming the host" ;;
  shm) grep -q "ccbench run: --require-path shm: host $P-h0: its network interfaces received .* the bytes crossed a NIC" \
    "$WORK/run.log" || fail "shm: no one-line message naming the host" ;;
esac
ok "$case_name: fabric.proof as expected"
