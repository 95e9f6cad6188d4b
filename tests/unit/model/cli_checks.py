"""The checks the model command-line tests share: a failure list and one run of ccbench."""
import subprocess

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run_ccbench(ccbench, args, timeout):
    """(exit code, stdout, stderr); exit code None when ccbench blocked past `timeout` seconds."""
    try:
        p = subprocess.run([ccbench, *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", "timed out (blocked)"
    return p.returncode, p.stdout, p.stderr
