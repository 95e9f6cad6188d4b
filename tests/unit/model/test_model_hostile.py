#!/usr/bin/python3
"""Hostile input to ccbench model fit / predict / plan: outputs that cannot be written, inputs that
are not regular files (a FIFO would block, /dev/zero never ends), sizes outside what a node count
measured, hand-edited model files and workload files. Each case: the exit code and the exact line.
Usage: test_model_hostile.py CCBENCH REPO_ROOT"""
import json
import os
import sys
import tempfile

from cli_checks import check, failures, run_ccbench

CCBENCH, ROOT = sys.argv[1], sys.argv[2]
PUB = os.path.join(ROOT, "results", "published")
WORKLOAD = os.path.join(ROOT, "configs", "workloads", "dense-70b-fsdp.yaml")


def run(*args):
    return run_ccbench(CCBENCH, args, float(os.environ.get("CCB_HOSTILE_TIMEOUT", "60")))


def expect(args, rc, err, what):
    got_rc, _, got_err = run(*args)
    check(got_rc == rc and got_err == err, f"{what}: exit {got_rc}, {got_err!r}; want {rc}, {err!r}")


with tempfile.TemporaryDirectory() as tmp:
    fifo = os.path.join(tmp, "fifo.json")
    os.mkfifo(fifo)
    folder = os.path.join(tmp, "folder")
    os.mkdir(folder)
    model = os.path.join(tmp, "p5.json")
    files = [os.path.join(PUB, f) for f in ("p5-awsome-2n-allreduce.json", "p5-hyperpod-32n-allreduce.json",
                                             "p5-hyperpod-4n-allreduce.json")]

    # -o that cannot take the model: refused before fitting, nothing written
    expect(["model", "fit", *files, "-o", folder], 2,
           f"ccbench model fit: -o {folder}: is a folder, expected a file path\n", "fit -o folder")
    expect(["model", "fit", *files, "-o", "/nonexistent/dir/m.json"], 2,
           "ccbench model fit: -o /nonexistent/dir/m.json: folder /nonexistent does not exist (missing folders are "
           "created, but not directly under /)\n", "fit -o missing folder")
    check(not os.path.exists("/nonexistent/dir"), "fit -o created a folder")
    expect(["model", "fit", fifo, "-o", model], 2,
           f"ccbench model fit: {fifo}: is a FIFO (named pipe), not a regular file\n", "fit FIFO")

    rc, out, err = run("model", "fit", *files, "-o", model, "--refits", "20")
    check(rc == 0, f"fit: {rc} {err}")

    # inputs that are not regular files: one line, exit 2, no hang
    q = ["--op", "allreduce", "--bytes", "1G", "--nodes", "4"]
    expect(["model", "predict", "/dev/zero", *q], 2,
           "ccbench model predict: /dev/zero: is a character device, not a regular file\n", "predict /dev/zero")
    expect(["model", "predict", fifo, *q], 2,
           f"ccbench model predict: {fifo}: is a FIFO (named pipe), not a regular file\n", "predict FIFO")
    expect(["model", "predict", folder, *q], 2, f"ccbench model predict: {folder}: is a folder, not a file\n",
           "predict folder")
    expect(["model", "plan", fifo, "--workload", WORKLOAD], 2,
           f"ccbench model plan: {fifo}: is a FIFO (named pipe), not a regular file\n", "plan model FIFO")
    expect(["model", "plan", model, "--workload", fifo], 2,
           f"ccbench model plan: {fifo}: is a FIFO (named pipe), not a regular file\n", "plan workload FIFO")
    expect(["model", "plan", model, "--workload", "/dev/zero"], 2,
           "ccbench model plan: /dev/zero: is a character device, not a regular file\n", "plan workload /dev/zero")

    # sizes outside those measured at the node count asked for are extrapolated, even when another
    # node count measured them (2 nodes: 8 B - 16 GiB; 4 and 32 nodes: 32 MiB - 8 GiB)
    for size, nodes, extrapolated in (("8", 32, True), ("16G", 32, True), ("16M", 32, True), ("32M", 32, False),
                                      ("8G", 32, False), ("8", 2, False), ("16G", 2, False), ("8", 8, True),
                                      ("1G", 8, False), ("1G", 64, True)):
        rc, out, err = run("model", "predict", model, "--op", "allreduce", "--bytes", size, "--nodes", str(nodes),
                           "--format", "json")
        check(rc == 0 and json.loads(out)["extrapolated"] is extrapolated,
              f"{size} on {nodes} nodes: extrapolated should be {extrapolated}: {rc} {out} {err}")

    # one node, below every fitted count: the fit on 2, 4, 8 nodes has a regime with no term left at
    # one node (no latency, no bus term, no network at N = 1); it must not answer 0 us
    small = os.path.join(tmp, "p5-2-8.json")
    rc, _, err = run("model", "fit", *[os.path.join(PUB, f"p5-hyperpod-{n}n-allreduce.json") for n in (2, 4, 8)],
                     "-o", small, "--refits", "20", "--no-cross-validation")
    check(rc == 0, f"fit 2-8: {rc} {err}")
    for size in ("1M", "1G"):
        rc, out, err = run("model", "predict", small, "--op", "allreduce", "--bytes", size, "--nodes", "1",
                           "--format", "json")
        p = json.loads(out) if rc == 0 else {}
        check(rc == 0 and p["time_us"] > 0 and p["time_lo_us"] > 0 and p["extrapolated"],
              f"{size} on 1 node: {rc} {out} {err}")

    # hand-edited model files
    good = json.load(open(model))

    def edited(change, name):
        m = json.loads(json.dumps(good))
        change(m["groups"][0])
        path = os.path.join(tmp, name)
        json.dump(m, open(path, "w"))
        return path

    def zero(g):
        for k in ("latency_us", "step_us", "us_per_byte", "us_per_net_byte"):
            g["regimes"][0][k] = 0

    for change, name, why in (
            (zero, "zero.json", "groups/0/regimes/0: every coefficient is 0 (a zero-time curve)"),
            (lambda g: g.update(ranks_per_node=1073741824), "rpn.json",
             "groups/0/ranks_per_node: must be an integer in 1..65536"),
            (lambda g: g.update(nodes=[4294967298, 4, 32]), "nodes.json",
             "groups/0/nodes: must hold integers in 1..1048576"),
            (lambda g: g.update(nodes=[4, 2, 32]), "order.json", "groups/0/nodes: must be increasing"),
            (lambda g: g["accuracy"].update(residual_sigma_log=1e308), "sigma.json",
             "groups/0/accuracy/residual_sigma_log: is 1e+308, above 10"),
            (lambda g: g.update(bytes_by_nodes=[[8, 8]]), "ranges.json",
             "groups/0/bytes_by_nodes: must hold one [bytes_min, bytes_max] per node count")):
        path = edited(change, name)
        expect(["model", "predict", path, *q], 2, f"ccbench model predict: {path}: {why}\n", name)

    # workload files
    text = open(WORKLOAD).read()

    def workload(name, old, new):
        check(old in text, f"{old!r} not in the workload")
        path = os.path.join(tmp, name)
        open(path, "w").write(text.replace(old, new, 1))
        return path

    line = next(i for i, s in enumerate(text.splitlines(), 1) if "parameters:" in s)
    path = workload("dup.yaml", "  layers: 80\n", "  layers: 80\n  layers: 40\n")
    dup_line = line + 2 if text.splitlines()[line].strip().startswith("layers") else None
    rc, _, err = run("model", "plan", model, "--workload", path)
    check(rc == 2 and "key 'layers' given twice (first on line" in err and err.startswith(f"ccbench model plan: {path}:"),
          f"duplicate key: {rc} {err!r}")
    path = workload("hex.yaml", "parameters: 70B", "parameters: 0x10")
    expect(["model", "plan", model, "--workload", path], 2,
           f"ccbench model plan: {path}:{line}: model.parameters: '0x10' is not a non-negative number (70e9, 70B, "
           "1.2T)\n", "hex parameters")
    path = workload("one.yaml", "parameters: 70B", "parameters: 1")
    rc, out, err = run("model", "plan", model, "--workload", path)
    check(rc == 0 and "--bytes" not in out + err and "0 bytes per call" in out, f"parameters 1: {rc} {out!r} {err!r}")

sys.exit(1 if failures else 0)
