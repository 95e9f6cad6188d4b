"""Shared helpers of the report integration tests: run ccbench, skip with a reason."""
import os
import subprocess
import sys
import tempfile

SKIP = 77


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def args():
    if len(sys.argv) < 3:
        sys.exit(f"usage: {sys.argv[0]} CCBENCH DATA_DIR")
    return sys.argv[1], sys.argv[2]


def run(cmd, **kw):
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def sample_files(data):
    return [os.path.join(data, n) for n in ("p5en-nccl.json", "p6-b200-nccl.json", "local-mpi.json")]


def workdir():
    return tempfile.mkdtemp(prefix="ccbench-report-")
