"""Helpers shared by the `ccbench run` integration tests: launch real mpirun, find rank processes."""
import json
import os
import signal
import subprocess
import tempfile
import time

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = os.environ.get("CCBENCH_SOURCE", ".")
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]


def env():
    e = dict(os.environ)
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return e


def run(np, args, timeout=300, extra_env=None):
    """Runs `mpirun -np N ccbench run ARGS`; returns CompletedProcess (text)."""
    e = env()
    if extra_env:
        e.update(extra_env)
    return subprocess.run(MPIRUN + ["-np", str(np), CCBENCH, "run"] + args, capture_output=True, text=True,
                          timeout=timeout, env=e)


def start(np, args, extra_env=None, launcher=None):
    """Starts `mpirun -np N ccbench run ARGS` (or LAUNCHER instead of mpirun's argv) in a session."""
    e = env()
    if extra_env:
        e.update(extra_env)
    return subprocess.Popen((launcher or MPIRUN) + ["-np", str(np), CCBENCH, "run"] + args, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=e, start_new_session=True)


def rank_pids(label):
    """{rank: pid} of the ccbench processes whose command line carries --label LABEL."""
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
    """Waits until the JSON-lines stream holds at least n rows."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(jsonl):
            with open(jsonl) as f:
                if sum(1 for line in f if line.strip()) >= n:
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


def tmpdir():
    return tempfile.mkdtemp(prefix="ccbench-test-")


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
