"""Helpers of the `ccbench fabric` integration tests: launch real mpirun, find rank processes."""
import os
import subprocess
import sys

# Process lookup, stream reading and cleanup are the same as for `ccbench run`'s tests.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
from ccbench_mpi import kill_group, load, load_rows, rank_pids, tmpdir, wait_for_rows  # noqa: E402,F401

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


def validate(doc):
    """Validates against the result schema when it exists (jsonschema from Debian's python3)."""
    if not os.path.exists(SCHEMA):
        return
    import jsonschema
    jsonschema.validate(doc, load(SCHEMA))
