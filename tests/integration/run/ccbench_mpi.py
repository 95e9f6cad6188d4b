"""Helpers shared by the `ccbench run` integration tests: launch real mpirun, find rank processes."""
import json
import os
import shutil
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


# A running ccbench writes its result stream again when its folder goes (result_writer.cpp), so
# shutil.rmtree on the live folder races it: a file created between rmtree's listing and its rmdir
# fails the removal ("Directory not empty"). Renaming takes the folder off its path in one step.
def remove_folder_under_a_writer(folder):
    folder = str(folder)
    trash = tempfile.mkdtemp(prefix="removed-", dir=os.path.dirname(folder))
    os.rename(folder, os.path.join(trash, "folder"))
    shutil.rmtree(trash)


def replace_folder_with_a_file(folder, text="a file where the folder was\n"):
    """Takes the folder away and puts a plain file at its path, so nothing can be created under it.
    The writer may create the folder again between the two steps; then both are done again."""
    for _ in range(100):
        if os.path.isdir(folder):
            remove_folder_under_a_writer(folder)
        try:
            fd = os.open(folder, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except (FileExistsError, IsADirectoryError):
            continue
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return
    raise AssertionError(f"{folder} kept being created again")
