#!/usr/bin/python3
"""Is a published number normal by a model that never saw it? Leave one out on results/published
(docs/model.md, "Known answers"): each of the 11 p5.48xlarge nccl-tests files is checked with
`ccbench model check` against a model fitted on the other 10.

Asserted (deterministic data, deterministic fit):
  - at the default (99% band, rows outside the fitted node counts and sizes not covered): every
    file with covered rows has at least 90% of them normal; exactly the rows whose node count or size
    the other files never measured are not covered (2-node and 32-node files of an op measured at
    one end only, the 8 B - 16 MiB and 16 GiB rows of the one file that has them), each with its reason;
  - with --extrapolate (every row judged, the band widened outside the fitted range): at least 90%
    of all rows normal.
Prints the table docs/model.md quotes, and every row that is not normal. Usage:
test_expect_published.py CCBENCH ROOT"""
import glob
import json
import os
import sys
import tempfile

from cli_checks import check, failures, run_ccbench

CCBENCH, ROOT = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(ROOT, "results", "published", "p5-*.json")))
check(len(files) == 11, f"11 published p5 files, found {len(files)}")


def judge(model, held_out, *flags):
    rc, out, err = run_ccbench(CCBENCH, ["model", "check", model, held_out, "--format", "json", *flags], 120)
    check(rc in (0, 1, 3), f"{held_out} {flags}: exit {rc}: {err}")
    return json.loads(out)["files"][0]


# The rows no other file measured: (file, rows not covered, the reason's tail).
NOT_COVERED = {
    "p5-awsome-2n-allreduce.json": (46, "is outside the sizes measured at 2 node(s) (32M - 8G)"),
    "p5-hyperpod-2n-alltoall.json": (14, "fitted on 4, 8, 16, 32 node(s)"),
    "p5-hyperpod-32n-allreduce.json": (18, "fitted on 2, 4, 8, 16 node(s)"),
    "p5-hyperpod-32n-alltoall.json": (14, "fitted on 2, 4, 8, 16 node(s)"),
}

totals = {"default": [0, 0, 0], "extrapolate": [0, 0, 0], "band 90": [0, 0, 0]}  # normal, covered, rows
lines = []
with tempfile.TemporaryDirectory() as tmp:
    for held in files:
        name = os.path.basename(held)
        model = os.path.join(tmp, "loo.json")
        rc, _, err = run_ccbench(CCBENCH, ["model", "fit", *[f for f in files if f != held], "-o", model], 300)
        check(rc == 0, f"fit without {name}: {err}")
        cells = [name]
        for mode, flags in (("default", ()), ("extrapolate", ("--extrapolate",)), ("band 90", ("--band", "90"))):
            f = judge(model, held, *flags)
            c = f["counts"]
            covered = c["rows"] - c["not_covered"]
            t = totals[mode]
            t[0] += c["normal"]
            t[1] += covered
            t[2] += c["rows"]
            cells.append(f"{c['normal']}/{covered}" + (f" ({c['not_covered']} n/c)" if c["not_covered"] else ""))
            if mode == "default":
                want = NOT_COVERED.get(name, (0, ""))
                check(c["not_covered"] == want[0], f"{name}: {c['not_covered']} rows not covered, expected {want[0]}")
                for r in f["rows"]:
                    e = r["expected"]
                    if e["verdict"] == "not_covered":
                        check(e["reason"].endswith(want[1]), f"{name} {r['bytes']}: reason {e['reason']}")
                if covered:
                    check(c["normal"] >= 0.9 * covered, f"{name}: {c['normal']} of {covered} covered rows normal (< 90%)")
            for r in f["rows"]:
                e = r["expected"]
                if e["verdict"] not in ("normal", "not_covered"):
                    print(f"  {mode:11s} {name:32s} {r['bytes']:>12d} {'in ' if r['in_place'] else 'out'} "
                          f"{e['verdict']:6s} shortfall {e['shortfall_pct']:+.1f}% ({e['metric']}, band {e['band']}"
                          f"{', extrapolated' if e.get('extrapolated') else ''})")
        lines.append(cells)

print("\nheld-out file                      99% band (default)   99% --extrapolate   90% band")
for cells in lines:
    print(f"{cells[0]:34s} {cells[1]:20s} {cells[2]:19s} {cells[3]}")
for mode, (normal, covered, rows) in totals.items():
    print(f"{mode:12s}: {normal} of {covered} covered rows normal ({100 * normal / covered:.1f}%), {rows} rows")
normal, covered, rows = totals["extrapolate"]
check(covered == rows and normal >= 0.9 * rows, f"--extrapolate: {normal} of {rows} rows normal (< 90%)")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("PASS")
