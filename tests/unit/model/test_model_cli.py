#!/usr/bin/python3
"""ccbench model fit/predict on the command line: outputs against the known answer, exit codes and
the exact one-line errors for bad input. Usage: test_model_cli.py CCBENCH MODEL_SYNTH"""
import json
import math
import os
import subprocess
import sys
import tempfile

from cli_checks import check, failures, run_ccbench

CCBENCH, SYNTH = sys.argv[1], sys.argv[2]


def run(*args):
    return run_ccbench(CCBENCH, args, 120)


# The truth of synthetic.hpp: two regimes, log2 N steps, allreduce on 8 ranks per node; the bytes
# terms per bus byte (2(p-1)/p S) and per byte a node sends over the network (2(N-1)/N S).
REGIMES = [(20.0, 5.0, 1e-3 / 20, 1e-5), (150.0, 30.0, 1e-3 / 100, 4e-6)]


def truth_us(nbytes, nodes, rpn=8):
    p = nodes * rpn
    bus = nbytes * 2 * (p - 1) / p
    net = nbytes * 2 * (nodes - 1) / nodes
    l2 = math.log2(nodes)
    return min(a + l * l2 + bus * w + net * u for a, l, w, u in REGIMES)


with tempfile.TemporaryDirectory() as tmp:
    data = os.path.join(tmp, "known")
    subprocess.run([SYNTH, data, "known"], check=True)
    model = os.path.join(tmp, "m.json")
    rc, out, err = run("model", "fit", data, "-o", model, "--refits", "100")
    check(rc == 0, f"fit exit {rc}: {err}")
    m = json.load(open(model))
    check(m["model_version"] == 2, "model_version 2")
    check(len(m["groups"]) == 1, "one group")
    g = m["groups"][0]
    check(g["op"] == "allreduce" and g["profile"] == "p5en.48xlarge" and g["ranks_per_node"] == 8, f"group key {g}")
    check(g["nodes"] == [2, 4, 8, 16], f"nodes {g['nodes']}")
    check(len(g["regimes"]) == 2, f"two regimes chosen, got {len(g['regimes'])}")
    check(len(g["refits"]) == 100, "100 refits recorded")
    acc = g["accuracy"]
    check(0 < acc["cv_leave_one_node_out"]["rms_log"] < 0.1, f"cv node {acc}")
    check(0 < acc["cv_held_out_sizes"]["rms_log"] < 0.1, f"cv sizes {acc}")
    check("allreduce" in out and "p5en.48xlarge" in out, f"fit table: {out}")

    # predict at 32 nodes, 1 GiB: outside the fitted node counts and sizes
    rc, out, err = run("model", "predict", model, "--op", "allreduce", "--bytes", "1G", "--nodes", "32", "--format", "json")
    check(rc == 0, f"predict exit {rc}: {err}")
    p = json.loads(out)
    t = truth_us(1 << 30, 32)
    check(p["extrapolated"] is True and p["from_spec"] is False, f"flags {p}")
    check(p["time_lo_us"] <= t <= p["time_hi_us"], f"truth {t} in band [{p['time_lo_us']}, {p['time_hi_us']}]")
    busbw = (1 << 30) * 2 * 255 / 256 / (p["time_us"] * 1e3)
    check(abs(p["busbw_gbps"] / busbw - 1) < 1e-9, f"busbw {p['busbw_gbps']} vs {busbw}")
    check(p["band"] == 0.9 and p["ranks_per_node"] == 8 and p["nodes"] == 32, f"fields {p}")

    # in range: 4 nodes, 1 MiB
    rc, out, err = run("model", "predict", model, "--op", "allreduce", "--bytes", "1M", "--nodes", "4", "--format", "json")
    p = json.loads(out)
    t = truth_us(1 << 20, 4)
    check(p["extrapolated"] is False, "1M on 4 nodes is inside the fit")
    check(p["time_lo_us"] <= t <= p["time_hi_us"], f"truth {t} in [{p['time_lo_us']}, {p['time_hi_us']}]")
    check(abs(p["time_us"] / t - 1) < 0.03, f"1M on 4 nodes within 3%: {p['time_us']} vs {t}")

    # text, and a profile never measured
    rc, out, err = run("model", "predict", model, "--op", "allreduce", "--bytes", "1G", "--nodes", "32",
                       "--profile", "p6-b300.48xlarge")
    check(rc == 0, f"from spec exit {rc}: {err}")
    check(out.startswith("allreduce 1G on 32 nodes x 8 ranks (p6-b300.48xlarge): time ") and
          out.rstrip().endswith("(90% band)  extrapolated  from spec"), f"text: {out!r}")

    # bad input: another model version
    bad = os.path.join(tmp, "v3.json")
    m2 = dict(m)
    m2["model_version"] = 3
    json.dump(m2, open(bad, "w"))
    rc, out, err = run("model", "predict", bad, "--op", "allreduce", "--bytes", "1G", "--nodes", "32")
    check(rc == 2, f"v3 exit {rc}")
    check(err == f"ccbench model predict: {bad}: model_version: is 3, this ccbench reads model_version 2\n", f"v3: {err!r}")

    # bad input: a key of the wrong type inside a group
    m3 = json.loads(json.dumps(m))
    m3["groups"][0]["regimes"][1]["us_per_byte"] = "fast"
    json.dump(m3, open(bad, "w"))
    rc, out, err = run("model", "predict", bad, "--op", "allreduce", "--bytes", "1G", "--nodes", "32")
    check(rc == 2 and err == f"ccbench model predict: {bad}: groups/0/regimes/1/us_per_byte: must be a number\n",
          f"wrong type: {rc} {err!r}")

    # bad input: a fit with one size only; the good model file is not overwritten
    one = os.path.join(tmp, "one")
    subprocess.run([SYNTH, one, "one-size"], check=True)
    before = open(model).read()
    rc, out, err = run("model", "fit", one, "-o", model)
    f = os.path.join(one, "one-size.json")
    check(rc == 2, f"one size exit {rc}")
    check(err == f"ccbench model fit: {f}: results/bytes: allreduce on p5en.48xlarge (8 ranks per node) has one size "
          f"only (1M); model fit needs at least 2 sizes\n", f"one size: {err!r}")
    check(open(model).read() == before, "the good model file is left as it was")

    # bad input: unknown op, profile, layout
    rc, out, err = run("model", "predict", model, "--op", "alltoall", "--bytes", "1G", "--nodes", "2")
    check(rc == 2 and err == "ccbench model predict: --op: the model has no fit for alltoall (fitted: allreduce)\n",
          f"op: {err!r}")
    rc, out, err = run("model", "predict", model, "--op", "allreduce", "--bytes", "1G", "--nodes", "2",
                       "--ranks-per-node", "4")
    check(rc == 2 and err == "ccbench model predict: --ranks-per-node: allreduce on p5en.48xlarge was fitted with 8 "
          "ranks per node only\n", f"rpn: {err!r}")
    rc, out, err = run("model", "predict", model, "--op", "allreduce", "--bytes", "1G", "--nodes", "2",
                       "--profile", "nope")
    check(rc == 2 and "'nope' was not measured and has no spec" in err, f"profile: {err!r}")
    rc, out, err = run("model", "predict", os.path.join(tmp, "missing.json"), "--op", "allreduce", "--bytes", "1G",
                       "--nodes", "2")
    check(rc == 2 and err.endswith("missing.json: no such file\n"), f"missing: {err!r}")

sys.exit(1 if failures else 0)
