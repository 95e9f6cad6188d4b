#!/usr/bin/python3
"""ccbench model check on the command line (docs/model.md, "Is my number normal? model check"): each
row's band recomputed from `model predict`'s 90% band with SciPy's normal quantiles, the verdicts
and shortfalls from the rows' own times, the exit codes (0 normal, 1 some row below, 3 nothing
covered, 2 bad input) with their one-line messages, the formats, -o's annotated result files, and
the shipped expectations of configs/expect. Usage: test_model_check.py CCBENCH ROOT"""
import json
import math
import os
import sys
import subprocess
import tempfile

from scipy.stats import norm

from cli_checks import check, failures, run_ccbench

CCBENCH, ROOT = sys.argv[1], sys.argv[2]
PUB = os.path.join(ROOT, "results", "published")
P5 = os.path.join(ROOT, "configs", "expect", "p5.48xlarge.json")
R99 = norm.ppf(0.995) / norm.ppf(0.95)


def run(*args):
    return run_ccbench(CCBENCH, args, 120)


def pub(name):
    return os.path.join(PUB, name)


def check_json(model, result, *flags):
    rc, out, err = run("model", "check", model, result, "--format", "json", *flags)
    return rc, (json.loads(out) if out.strip() else None), err


def busbw(op, ranks, nbytes, t_us):
    factor = 2 * (ranks - 1) / ranks if op == "allreduce" else (ranks - 1) / ranks
    return nbytes * factor / (t_us * 1e3)


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


# 1. Every covered row of the 16-node allreduce against the shipped p5 expectation, recomputed.
rc, doc, err = check_json(P5, pub("p5-hyperpod-16n-allreduce.json"))
check(rc == 1, f"16n allreduce: exit 1 (two rows below), got {rc}: {err}")
check(doc["exit_code"] == 1 and doc["band"] == "99%" and doc["model"] == P5, f"document head {doc and doc['band']}")
f = doc["files"][0]
check((f["profile"], f["nodes"], f["ranks_per_node"]) == ("p5.48xlarge", 16, 8), f"shape {f['profile']}")
check(f["counts"] == {"rows": 18, "normal": 16, "below": 2, "above": 0, "not_covered": 0}, f"counts {f['counts']}")
below = sorted((r["bytes"], r["in_place"]) for r in f["rows"] if r["expected"]["verdict"] == "below")
check(below == [(256 << 20, False), (256 << 20, True)], f"the rows below: 256 MiB, both variants: {below}")
rows = {(r["bytes"], r["in_place"]): r for r in json.load(open(pub("p5-hyperpod-16n-allreduce.json")))["results"]}
predicted = {}
for r in f["rows"]:
    e = r["expected"]
    if r["bytes"] not in predicted:
        prc, pout, perr = run("model", "predict", P5, "--op", "allreduce", "--bytes", str(r["bytes"]), "--nodes",
                              "16", "--format", "json")
        check(prc == 0, f"predict {r['bytes']}: {perr}")
        predicted[r["bytes"]] = json.loads(pout)
    p = predicted[r["bytes"]]
    t = p["time_us"]
    # The 99% band: the 90% band's half-widths on log scale times z(0.995) / z(0.95).
    lo_t = t * math.exp(-R99 * math.log(t / p["time_lo_us"]))
    hi_t = t * math.exp(R99 * math.log(p["time_hi_us"] / t))
    measured_t = rows[(r["bytes"], r["in_place"])]["time_us"]["median"]
    verdict = "below" if measured_t > hi_t else "above" if measured_t < lo_t else "normal"
    check(e["verdict"] == verdict, f"{r['bytes']} {r['in_place']}: verdict {e['verdict']}, recomputed {verdict}")
    check(e["basis"] == "measured" and e["band"] == "99%", f"basis/band {e}")
    if e["metric"] == "time_us":
        want = (lo_t, hi_t, t, measured_t, 100 * (measured_t / t - 1))
    else:
        check(e["metric"] == "busbw_gbps", f"metric {e['metric']}")
        want = (busbw("allreduce", 128, r["bytes"], hi_t), busbw("allreduce", 128, r["bytes"], lo_t),
                busbw("allreduce", 128, r["bytes"], t), busbw("allreduce", 128, r["bytes"], measured_t),
                100 * (1 - t / measured_t))
    got = (e["lo"], e["hi"], e["predicted"], e["measured"], e["shortfall_pct"])
    check(all(close(a, b, 1e-6) for a, b in zip(got, want)), f"{r['bytes']} {r['in_place']}: {got} vs {want}")
check(close(R99, 1.565993022931088, 1e-15), f"z(0.995)/z(0.95) = {R99}")
metrics = {r["bytes"]: r["expected"]["metric"] for r in f["rows"]}
check(metrics[32 << 20] == "busbw_gbps" and metrics[8 << 30] == "busbw_gbps", f"metrics {metrics}")

# --band 90: the model's own band, more rows outside it.
rc, doc90, err = check_json(P5, pub("p5-hyperpod-16n-allreduce.json"), "--band", "90")
check(doc90["band"] == "90%" and doc90["counts"]["normal"] < 16, f"--band 90 counts {doc90['counts']}")
p = predicted[1 << 30]
e = next(r["expected"] for r in doc90["files"][0]["rows"] if r["bytes"] == 1 << 30)
check(close(e["lo"], busbw("allreduce", 128, 1 << 30, p["time_hi_us"]), 1e-9), f"--band 90 lo {e['lo']}")

# 2. Exit 0: every row normal (the 8-node allreduce).
rc, out, err = run("model", "check", P5, pub("p5-hyperpod-8n-allreduce.json"))
check(rc == 0, f"8n allreduce: exit 0, got {rc}: {err}")
lines = out.splitlines()
check(lines[0] == f"{pub('p5-hyperpod-8n-allreduce.json')}: p5.48xlarge, 8 nodes x 8 ranks; model {P5} (measured), 99% band",
      f"title {lines[0]}")
check(lines[1].split() == ["op", "bytes", "place", "trial", "measured", "band", "predicted", "verdict", "shortfall"],
      f"header {lines[1]}")
check(lines[-1] == "  18 rows: 18 normal", f"summary {lines[-1]}")

with tempfile.TemporaryDirectory() as tmp:
    # 3. Exit 3, nothing covered, naming what the model lacks: a model of the alltoall only; an
    # expectation of another profile; a profile with no spec.
    only_a2a = os.path.join(tmp, "a2a.json")
    rc, _, err = run("model", "fit", *[pub(f"p5-hyperpod-{n}n-alltoall.json") for n in (2, 4, 8)], "-o", only_a2a)
    check(rc == 0, f"fit alltoall: {err}")
    rc, out, err = run("model", "check", only_a2a, pub("p5-hyperpod-2n-allreduce.json"))
    check(rc == 3, f"other op: exit 3, got {rc}")
    check(err == f"ccbench model check: no row is covered: model {only_a2a} has no allreduce on p5.48xlarge at 2 "
          "nodes x 8 ranks: it fits alltoall only\n", f"other op message: {err!r}")
    check(f"  not covered (18 rows): model {only_a2a} has no allreduce" in out, f"reason under the table: {out}")
    b200 = json.load(open(pub("p5-hyperpod-2n-allreduce.json")))
    b200["system"]["instance_type"] = "p6-b200.48xlarge"
    b200_path = os.path.join(tmp, "b200.json")
    json.dump(b200, open(b200_path, "w"))
    rc, out, err = run("model", "check", P5, b200_path)
    check(rc == 3 and err == f"ccbench model check: no row is covered: model {P5} has no allreduce on "
          "p6-b200.48xlarge at 2 nodes x 8 ranks: it is the expectation of p5.48xlarge only\n", f"other profile {rc} {err!r}")
    # The same run against the p6-b200 expectation: judged from the spec, and labelled so.
    rc, doc, err = check_json(os.path.join(ROOT, "configs", "expect", "p6-b200.48xlarge.json"), b200_path)
    check(rc in (0, 1) and doc["counts"]["not_covered"] == 0, f"p6-b200 from spec: {rc} {err}")
    check({r["expected"]["basis"] for r in doc["files"][0]["rows"]} == {"from spec, not validated"}, "spec basis")
    fake = dict(b200)
    fake["system"] = dict(b200["system"], instance_type="p9.fake")
    fake["run"] = dict(b200["run"], label="")
    fake_path = os.path.join(tmp, "fake.json")
    json.dump(fake, open(fake_path, "w"))
    # A plain fit (no expectation object) judges any profile it can answer, measured or from a spec.
    plain = os.path.join(tmp, "plain.json")
    rc, _, err = run("model", "fit", pub("p5-hyperpod-2n-allreduce.json"), pub("p5-hyperpod-4n-allreduce.json"), "-o",
                     plain)
    check(rc == 0, f"fit 2, 4 nodes: {err}")
    rc, out, err = run("model", "check", plain, fake_path)
    check(rc == 3 and err == f"ccbench model check: no row is covered: model {plain} has no allreduce on p9.fake at 2 "
          "nodes x 8 ranks: p9.fake was not measured and has no spec in configs/instances/aws.yaml (measured: "
          "p5.48xlarge)\n", f"no spec: {rc} {err!r}")
    # Outside the fitted node counts: not covered, unless --extrapolate.
    rc, out, err = run("model", "check", plain, pub("p5-hyperpod-8n-allreduce.json"))
    check(rc == 3 and err == f"ccbench model check: no row is covered: model {plain} has no allreduce on p5.48xlarge "
          "at 8 nodes x 8 ranks: fitted on 2, 4 node(s)\n", f"node count: {rc} {err!r}")
    rc, doc, err = check_json(plain, pub("p5-hyperpod-8n-allreduce.json"), "--extrapolate")
    check(rc in (0, 1) and doc["counts"]["not_covered"] == 0, f"--extrapolate judges: {rc} {doc and doc['counts']}")
    check(all(r["expected"].get("extrapolated") is True for r in doc["files"][0]["rows"]), "extrapolated marked")

    # 4. Exit 2, bad input, one line naming the file and key.
    nonodes = json.load(open(pub("p5-hyperpod-2n-allreduce.json")))
    del nonodes["system"]["nodes"]
    nonodes_path = os.path.join(tmp, "nonodes.json")
    json.dump(nonodes, open(nonodes_path, "w"))
    rc, out, err = run("model", "check", P5, nonodes_path)
    check(rc == 2 and err == f"ccbench model check: {nonodes_path}: system.nodes: missing; a row is judged at the "
          "run's node count (ccbench run records it; ccbench import takes --nodes)\n", f"no nodes: {rc} {err!r}")
    check(out == "", f"no table before a bad input: {out!r}")
    fifo = os.path.join(tmp, "fifo.json")
    os.mkfifo(fifo)
    rc, out, err = run("model", "check", P5, fifo)
    check(rc == 2 and err == f"ccbench model check: {fifo}: is a FIFO (named pipe), not a regular file\n",
          f"FIFO result: {rc} {err!r}")
    rc, out, err = run("model", "check", P5, "/dev/zero")
    check(rc == 2 and err == "ccbench model check: /dev/zero: is a character device, not a regular file\n",
          f"device result: {rc} {err!r}")
    rc, out, err = run("model", "check", fifo, pub("p5-hyperpod-2n-allreduce.json"))
    check(rc == 2 and err == f"ccbench model check: {fifo}: is a FIFO (named pipe), not a regular file\n",
          f"FIFO model: {rc} {err!r}")
    rc, out, err = run("model", "check", os.path.join(tmp, "missing.json"), pub("p5-hyperpod-2n-allreduce.json"))
    check(rc == 2 and "missing.json" in err and err.count("\n") == 1, f"missing model: {rc} {err!r}")
    rc, out, err = run("model", "check", pub("p5-hyperpod-2n-allreduce.json"), pub("p5-hyperpod-2n-allreduce.json"))
    check(rc == 2 and err.startswith("ccbench model check: ") and "model_version" in err,
          f"a result as the model: {rc} {err!r}")
    rc, out, err = run("model", "check", P5, pub("p5-hyperpod-2n-allreduce.json"), "--band", "95")
    check(rc == 2 and err == "ccbench model check: --band: 95 is not a band; 90 or 99 (percent)\n", f"--band: {err!r}")
    rc, out, err = run("model", "check", P5, pub("p5-hyperpod-2n-allreduce.json"), "--format", "csv")
    check(rc == 2 and err.startswith("ccbench model check: --format"), f"--format: {err!r}")

    # 5. -o: the result file, each row with its expected object (what report renders); several
    # inputs: a folder, one file each.
    annotated = os.path.join(tmp, "out", "16n.json")
    rc, out, err = run("model", "check", P5, pub("p5-hyperpod-16n-allreduce.json"), "-o", annotated, "--format", "json")
    check(rc == 1, f"-o exit {rc}: {err}")
    a = json.load(open(annotated))
    original = json.load(open(pub("p5-hyperpod-16n-allreduce.json")))
    check(len(a["results"]) == len(original["results"]), "every row kept")
    check(all(r["expected"] == d["expected"] for r, d in zip(a["results"], json.loads(out)["files"][0]["rows"])),
          "-o rows' expected equal the JSON document's")
    check({k: v for k, v in a["results"][0].items() if k != "expected"} ==
          {k: v for k, v in original["results"][0].items()}, "the row otherwise as it was")
    rc, md, err = run("report", annotated, "--format", "markdown")
    check(rc == 0 and "### Against the expectation" in md and "**below**" in md, f"report of -o: {rc} {err}")
    folder = os.path.join(tmp, "judged")
    rc, out, err = run("model", "check", P5, pub("p5-hyperpod-2n-allreduce.json"), pub("p5-hyperpod-4n-allreduce.json"),
                       "-o", folder)
    check(rc == 1, f"two files: exit 1 (4n has rows below), got {rc}: {err}")
    check(sorted(os.listdir(folder)) == ["p5-hyperpod-2n-allreduce.json", "p5-hyperpod-4n-allreduce.json"],
          f"-o folder {os.listdir(folder) if os.path.isdir(folder) else None}")
    rc, out, err = run("model", "check", P5, pub("p5-hyperpod-2n-allreduce.json"), pub("p5-hyperpod-4n-allreduce.json"),
                       "-o", annotated)
    check(rc == 2 and err == f"ccbench model check: -o {annotated}: 2 result files are checked, so -o names a folder "
          "(one file each); this is a file\n", f"-o file for two inputs: {err!r}")

    # 6. Markdown: a table per file.
    rc, md, err = run("model", "check", P5, pub("p5-hyperpod-16n-allreduce.json"), "--format", "markdown")
    check(rc == 1 and md.startswith("## ccbench model check\n\n### "), f"markdown head {md[:80]!r}")
    check("| op | size | place | trial | measured | band | predicted | verdict | shortfall |\n" in md, "markdown header")
    check("| allreduce | 256M | out | 0 | 148 GB/s | [154, 207] GB/s | 178 GB/s | **below** | +17.0% |\n" in md,
          f"markdown row: {md}")
    check("18 rows: 16 normal, 2 below.\n" in md, "markdown summary")

# 7. The shipped expectations are what configs/expect/make.sh makes (same build, same files).
with tempfile.TemporaryDirectory() as tmp:
    p = subprocess.run(["bash", os.path.join(ROOT, "configs", "expect", "make.sh"), tmp], capture_output=True, text=True,
                       env=dict(os.environ, CCBENCH=CCBENCH))
    check(p.returncode == 0, f"make.sh: {p.stderr}")

    def same(a, b):
        if isinstance(a, float) or isinstance(b, float):
            return close(float(a), float(b), 1e-9)
        if isinstance(a, dict):
            return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, list):
            return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        return a == b

    for profile, basis in (("p5.48xlarge", "measured"), ("p5en.48xlarge", "from spec, not validated"),
                           ("p6-b200.48xlarge", "from spec, not validated"),
                           ("p6-b300.48xlarge", "from spec, not validated")):
        shipped = json.load(open(os.path.join(ROOT, "configs", "expect", f"{profile}.json")))
        made = json.load(open(os.path.join(tmp, f"{profile}.json")))
        check(same(shipped, made), f"configs/expect/{profile}.json differs from make.sh's (run configs/expect/make.sh)")
        check(shipped["expectation"]["profile"] == profile and shipped["expectation"]["basis"] == basis,
              f"{profile}: expectation {shipped['expectation']}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("PASS")
