#!/usr/bin/env bash
# Runs scripts/slurm/ccbench.sbatch on a real single-node Slurm started here: munged, slurmctld and
# slurmd with a minimal slurm.conf in a temporary folder, 2 tasks on CPU (BACKEND=mpi). Checks the
# result file named by job id (JSON Schema and key fields), the HTML report beside it, and that a
# second job with BASELINE set exits with `ccbench compare`'s exit code. Daemons stop in a trap.
#
# Usage: test_slurm.sh CCBENCH SBATCH_SCRIPT [SCHEMA]     Needs root and Debian's slurm-wlm + munge.
set -uo pipefail
ccbench=$(readlink -f "$1")
sbatch_script=$(readlink -f "$2")
schema=${3:-}
SKIP=77
say() { echo "slurm-test: $*"; }

if [[ $(id -u) != 0 ]]; then say "SKIP: needs root (starts slurmctld, slurmd and munged)"; exit $SKIP; fi
for cmd in munged mungekey slurmctld slurmd sbatch srun scontrol sinfo; do
  command -v $cmd >/dev/null || { say "SKIP: $cmd not found (Debian packages slurm-wlm munge)"; exit $SKIP; }
done
# `ccbench --help` lists the commands this build has (`run --help` would start MPI).
if ! "$ccbench" --help 2>&1 | grep -E '^ +run ' >/dev/null; then say "SKIP: $ccbench has no run command"; exit $SKIP; fi

T=$(mktemp -d /tmp/ccbench-slurm.XXXXXX)
chmod 755 "$T"
export SLURM_CONF=$T/slurm.conf
cleanup() {
  scontrol shutdown >/dev/null 2>&1
  for pidfile in "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munged.pid"; do
    [[ -f $pidfile ]] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  done
  if [[ ${KEEP_TMP:-0} != 1 ]]; then rm -rf "$T"; else say "kept $T"; fi
}
trap cleanup EXIT
dump_logs() {
  for f in "$T"/slurmctld.log "$T"/slurmd.log "$T"/munged.log "$T"/job-*.out; do
    [[ -f $f ]] && { echo "----- $f (tail)"; tail -40 "$f"; }
  done
}
fail() { say "FAILED: $*"; dump_logs; exit 1; }

# munge with its own key and socket.
mkdir -p "$T/munge" && chmod 700 "$T/munge"
mungekey -c -k "$T/munge/munge.key" 2>/dev/null || dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge/munge.key"
munged --force --key-file="$T/munge/munge.key" --socket="$T/munge/munge.sock" --pid-file="$T/munged.pid" \
  --log-file="$T/munged.log" --seed-file="$T/munge/seed" || fail "munged did not start"

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("",0)); print(s.getsockname()[1])'; }
host=$(hostname -s)
node_line=$(slurmd -C | head -1)   # NodeName=... CPUs=... RealMemory=...
cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$node_line")
mkdir -p "$T/state" "$T/spool"
cat >"$SLURM_CONF" <<CONF
ClusterName=ccbenchtest
SlurmctldHost=$host
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.sock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
$node_line State=UNKNOWN
PartitionName=ccbench Nodes=$host Default=YES MaxTime=30 State=UP OverSubscribe=YES
CONF
sed -i 's/ UpTime=[^ ]*//' "$SLURM_CONF"

slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for _ in $(seq 60); do
  state=$(sinfo -h -n "$host" -o %t 2>/dev/null)
  [[ $state == idle* ]] && break
  sleep 1
done
[[ ${state:-} == idle* ]] || fail "node never became idle (state '${state:-none}')"
say "slurm up: node $host ($cpus CPUs) idle; srun MPI plugins: $(srun --mpi=list 2>&1 | grep -o 'mpi/[a-z0-9_]*\|pmix[a-z0-9_]*\|pmi2\|none' | sort -u | tr '\n' ' ')"

# Which way MPI ranks start: srun with PMIx, then PMI-2, then mpirun inside the allocation.
mkdir -p "$T/out"
submit() {  # submit ENV... -- sbatch args: waits (bounded) and prints the job id; sets job_rc
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local out
  out=$(cd "$T" && env "${envs[@]}" timeout 240 sbatch --parsable --wait --nodes=1 --ntasks-per-node=2 \
    --gpus-per-node=0 --time=10 --output="$T/job-%j.out" "$@" 2>"$T/sbatch.err")
  job_rc=$?
  job_id=${out%%;*}
  [[ $job_rc == 124 ]] && { scancel "$job_id" 2>/dev/null; fail "job $job_id ran past 240 s"; }
  [[ -n $job_id ]] || fail "sbatch did not submit: $(cat "$T/sbatch.err")"
}
# shellcheck disable=SC2054  # the op list is one comma-separated argument
sweep=(--ops allreduce,allgather -b 8 -e 64K -f 8 -n 20 -w 2 --in-place no)
base_env=(CCBENCH="$ccbench" BACKEND=mpi OUT_DIR="$T/out" OMPI_MCA_btl_vader_single_copy_mechanism=none
  OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe)
launch=""
for attempt in "LAUNCHER=srun SRUN_MPI=pmix" "LAUNCHER=srun SRUN_MPI=pmi2" "LAUNCHER=mpirun"; do
  # shellcheck disable=SC2086  # an attempt is several VAR=value words
  submit "${base_env[@]}" $attempt -- "$sbatch_script" "${sweep[@]}"
  if [[ $job_rc == 0 && -f $T/out/ccbench-$job_id.json ]]; then launch=$attempt; break; fi
  say "job $job_id with $attempt: exit $job_rc; output tail:"
  tail -5 "$T/job-$job_id.out" 2>/dev/null | sed 's/^/    /'
done
[[ -n $launch ]] || fail "no launch method produced a result"
case $launch in
  *pmix*) say "ranks started by srun --mpi=pmix (the launcher's default)" ;;
  *pmi2*) say "NOTE: srun --mpi=pmix failed here; ranks started by srun --mpi=pmi2 (SRUN_MPI=pmi2)" ;;
  *) say "NOTE: srun could not start MPI ranks here; fell back to mpirun inside the allocation (LAUNCHER=mpirun)" ;;
esac
result=$T/out/ccbench-$job_id.json
say "job $job_id: exit $job_rc, result $result"

# The result file: schema, ranks, status, rows, correctness.
/usr/bin/python3 - "$result" "$schema" <<'PY' || fail "result file check"
import json, sys
path, schema = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
if schema:
    try:
        import jsonschema
        jsonschema.validate(doc, json.load(open(schema)))
        print(f"slurm-test: {path} valid against {schema}")
    except ImportError:
        print("slurm-test: python3-jsonschema missing: schema not checked")
problems = []
if doc.get("schema_version") != 1: problems.append("schema_version")
if doc["run"]["status"] != "complete": problems.append(f"status {doc['run']['status']}")
if doc["system"].get("ranks") != 2: problems.append(f"system.ranks {doc['system'].get('ranks')}")
if not doc["run"]["label"].startswith("ccbench-"): problems.append(f"label {doc['run']['label']}")
rows = doc["results"]
ops = {r["op"] for r in rows}
if ops != {"allreduce", "allgather"}: problems.append(f"ops {ops}")
if any(r["ranks"] != 2 or r["wrong"] != 0 or r["time_us"]["median"] <= 0 for r in rows): problems.append("bad rows")
if problems:
    sys.exit("slurm-test: " + ", ".join(problems))
print(f"slurm-test: {len(rows)} rows, 2 ranks, ops {sorted(ops)}, no wrong elements")
PY
[[ -s $T/out/ccbench-$job_id.html ]] || fail "no HTML report beside the result"

# The compare step: a second job against the first as BASELINE exits with compare's code.
first=$result
# shellcheck disable=SC2086  # an attempt is several VAR=value words
submit "${base_env[@]}" $launch BASELINE="$first" -- "$sbatch_script" "${sweep[@]}"
second=$T/out/ccbench-$job_id.json
[[ -f $second ]] || fail "second job $job_id wrote no result"
"$ccbench" compare "$first" "$second" >/dev/null 2>&1
want=$?
[[ $want != 2 ]] || fail "ccbench compare exits 2 (usage or parse error) on the two results"
[[ $job_rc == "$want" ]] || fail "job with BASELINE exited $job_rc, compare exits $want"
grep -q "compare against" "$T/job-$job_id.out" || fail "job output has no compare step"
say "job $job_id with BASELINE: exit $job_rc = compare's exit code"
say "PASS"
