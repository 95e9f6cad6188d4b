"""Helpers of the `ccbench fabric` integration tests: launch real mpirun, find rank processes."""
import json
import os
import signal
import subprocess
import tempfile
import time

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = os.environ.get("CCBENCH_SOURCE", ".")
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
SCHEMA = os.path.join(SOURCE, "configs", "schema", "result.schema.json")
# Short sampling: these tests check behaviour, not performance.
QUICK = ["-n", "auto", "--max-time-per-size", "0.05", "-w", "2"]


def env(extra=None):
    e = dict(os.environ)
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    e.update(extra or {})
    return e


def command(args, np=2):
    return MPIRUN + ["-np", str(np), CCBENCH, "fabric"] + list(args)


def run(args, np=2, timeout=120, extra_env=None):
    return subprocess.run(command(args, np), capture_output=True, text=True, timeout=timeout, env=env(extra_env))


def start(args, np=2, extra_env=None):
    return subprocess.Popen(command(args, np), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env(extra_env), start_new_session=True)


def rank_pids(label):
    """{rank: pid} of the ccbench processes whose command line carries LABEL."""
    pids = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
            if not cmd or not cmd[0].endswith(b"ccbench") or label.encode() not in cmd:
                continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                for item in f.read().split(b"\0"):
                    if item.startswith(b"OMPI_COMM_WORLD_RANK="):
                        pids[int(item.split(b"=")[1])] = int(pid)
        except OSError:
            continue
    return pids


def wait_for_rows(jsonl, n, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(jsonl) and len(load_rows(jsonl)) >= n:
            return True
        time.sleep(0.05)
    return False


def load(path):
    with open(path) as f:
        return json.load(f)


def load_rows(jsonl):
    rows = []
    with open(jsonl) as f:
        for line in f:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # a torn last line
    return rows


def validate(doc):
    """Validates against the result schema when it exists (jsonschema from Debian's python3)."""
    if not os.path.exists(SCHEMA):
        return
    import jsonschema
    jsonschema.validate(doc, load(SCHEMA))


def tmpdir():
    return tempfile.mkdtemp(prefix="ccbench-fabric-test-")


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
