#!/usr/bin/python3
"""results/published/moe: every file is what import.sh's tools/moe_table_to_results.py calls make of
the typed pplx-garden, DeepEP and UCCL-EP tables today, every file validates against
configs/schema/result.schema.json, the rows hold the published times and the bytes from the
published setup, and `ccbench compare` of the EFA file against the ConnectX-7 file of one EP size
gives the ratio of the published times."""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import jsonschema

if len(sys.argv) != 3:
    sys.exit(f"usage: {sys.argv[0]} CCBENCH SOURCE_DIR")
ccbench, src = sys.argv[1], sys.argv[2]
published = os.path.join(src, "results/published")
moe = os.path.join(published, "moe")
TABLES = (("pplx-garden", "sources/pplx-garden/decode_dispatch_combine.csv"),
          ("deepep", "sources/deepep/low_latency_h800_cx7.csv"),
          ("uccl-ep", "sources/uccl-ep/low_latency_p5en.csv"))
failures = []

# The published decode table (pplx-garden README, "Decode (128 tokens) Dispatch and Combine"), by
# hand: EP -> (EFA dispatch, EFA combine, CX7 dispatch, CX7 combine), microseconds.
PUBLISHED = {64: (266.7, 391.2, 187.5, 309.1), 32: (229.1, 335.0, 153.9, 266.3),
             16: (214.8, 241.5, 110.2, 185.5), 8: (49.7, 64.2, 50.5, 65.3)}
DISPATCH_BYTES = 128 * 8 * 7168 * 1  # tokens x top-k x hidden x fp8 bytes = 7340032
COMBINE_BYTES = 128 * 8 * 7168 * 2  # bf16: 14680064
# DeepEP README, "Low-latency kernels with pure RDMA": EP -> (dispatch, combine) latency, us.
DEEPEP = {8: (77, 114), 16: (118, 195), 32: (155, 273), 64: (173, 314), 128: (192, 369), 256: (194, 360)}
# UCCL-EP README, "Low-latency kernels with pure RDMA", "On p5en": EP -> (dispatch, combine), us.
UCCL_P5EN = {16: (226, 293), 24: (386, 580), 32: (465, 694)}

tmp = tempfile.mkdtemp(prefix="ccbench-published-moe-")
try:
    # 1. import.sh converts each table into moe/, and a fresh conversion equals the committed files,
    # name for name (import.sh itself is not run: it also rewrites the nccl-tests files in place).
    import_sh = open(os.path.join(published, "import.sh")).read()
    for source, table in TABLES:
        if f'"tools/moe_table_to_results.py" {source} "{table}" moe' not in import_sh:
            failures.append(f"import.sh does not convert {table} ({source}) into moe/")
    for source, table in TABLES:
        r = subprocess.run([sys.executable, "tools/moe_table_to_results.py", source, table, tmp], cwd=published,
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            failures.append(f"converter {source} exit {r.returncode}: {r.stderr.strip()}")
    committed_names = sorted(os.listdir(moe))
    fresh_names = sorted(os.listdir(tmp))
    expected_names = sorted([f"pplx-garden-{fab}-ep{ep}-decode.json" for fab in ("efa", "cx7") for ep in PUBLISHED]
                            + [f"deepep-ll-cx7-ep{ep}-decode.json" for ep in DEEPEP]
                            + [f"uccl-ep-ll-p5en-ep{ep}-decode.json" for ep in UCCL_P5EN])
    if committed_names != expected_names or fresh_names != expected_names:
        failures.append(f"files: committed {committed_names}, fresh {fresh_names}, expected {expected_names}")
    for name in sorted(set(committed_names) & set(fresh_names)):
        committed = json.load(open(os.path.join(moe, name)))
        fresh = json.load(open(os.path.join(tmp, name)))
        fresh["run"]["command"] = committed["run"]["command"]  # names the output folder, not the data
        if fresh != committed:
            failures.append(f"{name}: differs from a fresh conversion of {committed['tool']['source_file']}")

    # 2. Every file validates against the result schema.
    with open(os.path.join(src, "configs/schema/result.schema.json")) as f:
        schema = json.load(f)
    for name in committed_names:
        errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(os.path.join(moe, name))))]
        if errors:
            failures.append(f"{name}: schema: {errors[:3]}")

    # 3. The rows: published times, bytes from the setup, ranks (and where the source says 8 GPUs a
    # node, the nodes) from the EP size; DeepEP states no layout, so its files carry none. Only
    # UCCL-EP names an instance: p5en.48xlarge, EFA v3 at 3200 Gbit/s (configs/instances/aws.yaml).
    expected = {}
    for ep, (efa_d, efa_c, cx7_d, cx7_c) in PUBLISHED.items():
        expected[f"pplx-garden-efa-ep{ep}-decode.json"] = (ep, (efa_d, efa_c), "efa", (ep // 8, 8), (None, None, None))
        expected[f"pplx-garden-cx7-ep{ep}-decode.json"] = (ep, (cx7_d, cx7_c), "ib", (ep // 8, 8), (None, None, None))
    for ep, times in DEEPEP.items():
        expected[f"deepep-ll-cx7-ep{ep}-decode.json"] = (ep, times, "ib", (None, None), (None, None, None))
    for ep, times in UCCL_P5EN.items():
        expected[f"uccl-ep-ll-p5en-ep{ep}-decode.json"] = (ep, times, "efa", (ep // 8, 8), ("p5en.48xlarge", "v3", 3200))
    for name, (ep, (t_d, t_c), path, layout, instance) in expected.items():
        if name not in committed_names:
            continue
        d = json.load(open(os.path.join(moe, name)))
        got = {(x["op"], x["dtype"], x["bytes"], x["ranks"], x["samples_kind"], x["time_us"]["median"]) for x in d["results"]}
        want = {("moe_dispatch", "fp8_e4m3", DISPATCH_BYTES, ep, "summary", t_d),
                ("moe_combine", "bfloat16", COMBINE_BYTES, ep, "summary", t_c)}
        if got != want or len(d["results"]) != 2:
            failures.append(f"{name}: rows {sorted(got)} != {sorted(want)}")
        for x in d["results"]:  # algbw = S / t; busbw = algbw x (n-1)/n, the even matrix's off-rank share
            algbw = x["bytes"] / (x["time_us"]["median"] * 1e3)
            if not (math.isclose(x["algbw_gbps"], algbw, rel_tol=1e-12) and math.isclose(x["busbw_gbps"], algbw * (ep - 1) / ep, rel_tol=1e-12)):
                failures.append(f"{name}: {x['op']} algbw {x['algbw_gbps']} busbw {x['busbw_gbps']}")
        meta = (d["system"]["ranks"], (d["system"].get("nodes"), d["system"].get("ranks_per_node")), d["fabric"]["path"],
                (d["system"].get("instance_type"), d["fabric"]["generation"], d["fabric"]["link_gbps"]))
        if meta != (ep, layout, path, instance):
            failures.append(f"{name}: ranks, (nodes, ranks/node), fabric.path, (instance, EFA generation, link) {meta}")

    # 4. compare EFA (baseline) vs CX7 (candidate): ratio = candidate/baseline busbw = EFA time / CX7 time.
    for ep, (efa_d, efa_c, cx7_d, cx7_c) in PUBLISHED.items():
        efa = os.path.join(moe, f"pplx-garden-efa-ep{ep}-decode.json")
        cx7 = os.path.join(moe, f"pplx-garden-cx7-ep{ep}-decode.json")
        r = subprocess.run([ccbench, "compare", efa, cx7, "--format", "json"], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            failures.append(f"EP{ep}: compare exit {r.returncode}: {r.stderr.strip()[-300:]}")
            continue
        out = json.loads(r.stdout)
        ratios = {(x["op"], x["bytes"]): x["ratio"] for x in out["rows"]}
        want = {("moe_dispatch", DISPATCH_BYTES): efa_d / cx7_d, ("moe_combine", COMBINE_BYTES): efa_c / cx7_c}
        if ratios.keys() != want.keys() or any(not math.isclose(ratios[k], want[k], rel_tol=1e-9) for k in want):
            failures.append(f"EP{ep}: compare ratios {ratios} != {want}")
        geomean = math.sqrt(want[("moe_dispatch", DISPATCH_BYTES)] * want[("moe_combine", COMBINE_BYTES)])
        if not math.isclose(out["summary"]["geomean"]["ratio"], geomean, rel_tol=1e-9):
            failures.append(f"EP{ep}: geomean {out['summary']['geomean']['ratio']} != {geomean}")
        # The files differ in the fabric only (and the label): nothing compare must match differs.
        if out["differences"].get("fabric_path") != ["efa", "ib"] or set(out["differences"]) != {"fabric_path", "provider", "label"}:
            failures.append(f"EP{ep}: compare differences {out['differences']}")
        print(f"  ok: EP{ep} compare: dispatch {want[('moe_dispatch', DISPATCH_BYTES)]:.4f}x, combine {want[('moe_combine', COMBINE_BYTES)]:.4f}x")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

if failures:
    print("\nFAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("all ok")
