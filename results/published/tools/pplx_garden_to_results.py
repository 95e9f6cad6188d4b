#!/usr/bin/env python3
"""Write ccbench result files from the pplx-garden decode dispatch/combine table (README.md, [3]).

One file per fabric and EP size (moe/pplx-garden-{efa,cx7}-ep{8,16,32,64}-decode.json), each with
a moe_dispatch and a moe_combine summary row (`samples_kind: "summary"`, one published time, no
trials). Only the pplx-EFA and pplx-CX7 columns are written: the same kernels and benchmark on two
NICs. The DeepEP-CX7 column stays in the CSV but is not imported (README.md says why).

The setup is bench_all_to_all's defaults at the table's commit, run with the README's command
(8 GPUs a node, --nvlink=8): 128 tokens a rank, top-8 of 256 experts, hidden 7168, dispatch in
float8_e4m3fn, combine in bfloat16. The bytes a rank sends, every (token, expert) copy counted,
its own rank's included, as `ccbench run --moe` counts them (docs/method.md):
    dispatch: tokens x top_k x hidden x 1 B = 128 x 8 x 7168 x 1 = 7340032
    combine:  tokens x top_k x hidden x 2 B = 128 x 8 x 7168 x 2 = 14680064
(dispatch's 56 float32 scales a token, 229376 B more, are left out so the rows line up with a
`ccbench run --moe 256,8,128,7168 -d fp8_e4m3` row at the same S.)

usage: pplx_garden_to_results.py CSV OUTDIR
"""
import csv
import json
import os
import re
import sys

EXPERTS, TOP_K, TOKENS, HIDDEN = 256, 8, 128, 7168
RANKS_PER_NODE = 8
# fabric.path and fabric.provider: EFA through
# libfabric's efa provider, ConnectX-7 through libibverbs (ccbench's "ib", as for NCCL's IB net).
SYSTEMS = {"pplx-EFA": ("efa", "efa"), "pplx-CX7": ("cx7", "ib")}  # column -> (name part, fabric)
OPS = (("moe_dispatch", "dispatch_us", "fp8_e4m3", 1), ("moe_combine", "combine_us", "bfloat16", 2))
SOURCE_URL = "https://github.com/perplexityai/pplx-garden/blob/b3c4b59bab08bfb307ec7809b88a49ba8d53d633/README.md"


def project_version() -> str:
    """ccbench's version, from the top-level CMakeLists.txt (its one source)."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "..", "CMakeLists.txt")) as f:
        m = re.search(r"project\(ccbench VERSION (\S+)", f.read())
    if not m:
        sys.exit("CMakeLists.txt: no project(ccbench VERSION ...)")
    return m.group(1)


def row(op: str, dtype: str, elem_bytes: int, time_us: float, ranks: int) -> dict:
    size = TOKENS * TOP_K * HIDDEN * elem_bytes
    # The source publishes a time only: algbw is S / t (GB = 1e9 B, the GB/s pplx's benchmark
    # prints). ccbench's own moe busbw counts the off-rank bytes of the row's matrix; the routing
    # the source drew is not published, so busbw takes the even matrix's off-rank share (n-1)/n,
    # ccbench's bus factor for these ops without a matrix (core/bandwidth.cpp), as compare does.
    algbw = size / (time_us * 1e3)
    busbw = algbw * (ranks - 1) / ranks
    return {
        "op": op, "backend": "pplx-garden", "dtype": dtype, "redop": "none", "in_place": False, "root": -1,
        "bytes": size, "count": TOKENS * TOP_K * HIDDEN, "ranks": ranks, "trial": 0,
        "samples_us": [time_us], "batch": 1, "samples_kind": "summary",
        "time_us": {"min": time_us, "median": time_us, "mean": time_us, "p99": time_us, "max": time_us, "ci95": None},
        "algbw_gbps": algbw, "busbw_gbps": busbw, "wrong": 0, "ci_target_met": False,
    }


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    src, outdir = sys.argv[1], sys.argv[2]
    with open(src, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    reader = csv.DictReader(lines)
    if reader.fieldnames != ["ep", "system", "dispatch_us", "combine_us"]:
        print(f"{src}: unexpected header {reader.fieldnames}", file=sys.stderr)
        return 2
    version = project_version()
    os.makedirs(outdir, exist_ok=True)
    written = []
    for rec in reader:
        if rec["system"] not in SYSTEMS:
            continue
        name, fabric = SYSTEMS[rec["system"]]
        ranks = int(rec["ep"])
        out_name = f"pplx-garden-{name}-ep{ranks}-decode.json"
        label = f"published: pplx-garden README, {rec['system']} EP{ranks} decode"
        doc = {
            "schema_version": 1,
            "tool": {"name": "ccbench", "version": version, "imported_from": "pplx-garden",
                     "source_file": src, "source_url": SOURCE_URL},
            "run": {"status": "complete", "started_at": "", "finished_at": "",
                    "command": ["tools/pplx_garden_to_results.py", src, outdir], "label": label,
                    "exit_code": 0, "error": None},
            "system": {"nodes": ranks // RANKS_PER_NODE, "ranks": ranks, "ranks_per_node": RANKS_PER_NODE},
            "fabric": {"path": fabric, "provider": fabric, "generation": None, "link_gbps": None},
            "software": {}, "environment": {},
            "config": {"backend": "pplx-garden", "ops": [op for op, *_ in OPS], "redop": "none",
                       "moe": f"{EXPERTS},{TOP_K},{TOKENS},{HIDDEN}",
                       "timing": {"method": "pplx-garden bench_all_to_all",
                                  "sample": "published figure; the statistic is not stated (the benchmark "
                                            "pools every rank's per-iteration CUDA-event times)"}},
            "results": [row(op, dtype, size, float(rec[col]), ranks) for op, col, dtype, size in OPS],
        }
        with open(os.path.join(outdir, out_name), "w") as out:
            json.dump(doc, out, indent=2, sort_keys=True)
            out.write("\n")
        written.append(out_name)
    print("\n".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
