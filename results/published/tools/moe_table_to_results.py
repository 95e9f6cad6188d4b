#!/usr/bin/env python3
"""Write ccbench result files from a published MoE dispatch/combine latency table (README.md, [3] - [5]).

One file per system and EP size, each with a moe_dispatch and a moe_combine summary row
(`samples_kind: "summary"`, one published time, no trials). SOURCE names the table:

  pplx-garden  sources/pplx-garden/decode_dispatch_combine.csv -> moe/pplx-garden-{efa,cx7}-ep{N}-decode.json
               (the pplx-EFA and pplx-CX7 columns: the same kernels and benchmark on two NICs; the
               DeepEP-CX7 column stays in the CSV and is not imported, README.md says why)
  deepep       sources/deepep/low_latency_h800_cx7.csv -> moe/deepep-ll-cx7-ep{N}-decode.json
  uccl-ep      sources/uccl-ep/low_latency_p5en.csv -> moe/uccl-ep-ll-p5en-ep{N}-decode.json

All tables use the DeepSeek-V3 decode setting: 128 tokens a rank, top-8, hidden 7168, dispatch in
FP8 (e4m3), combine in BF16. The bytes a rank sends, every (token, expert) copy counted, its own
rank's included, as `ccbench run --moe` counts them (docs/method.md):
    dispatch: tokens x top_k x hidden x 1 B = 128 x 8 x 7168 x 1 = 7340032
    combine:  tokens x top_k x hidden x 2 B = 128 x 8 x 7168 x 2 = 14680064
(dispatch's per-token FP8 scales, 56 float32 = 224 B in both benchmarks, are left out so the rows
line up with a `ccbench run --moe E,8,128,7168 -d fp8_e4m3` row at the same S.)

usage: moe_table_to_results.py pplx-garden|deepep|uccl-ep CSV OUTDIR
"""
import csv
import json
import os
import re
import sys

TOP_K, TOKENS, HIDDEN = 8, 128, 7168
OPS = (("moe_dispatch", "dispatch_us", "fp8_e4m3", 1), ("moe_combine", "combine_us", "bfloat16", 2))

# Per source: the CSV header, the table's system column -> (file name part, fabric.path = provider:
# EFA through libfabric's efa provider, ConnectX-7 through libibverbs, ccbench's "ib" as for NCCL's
# IB net), what the source states of the layout and experts, and the source's name and address.
SOURCES = {
    "pplx-garden": {
        "header": ["ep", "system", "dispatch_us", "combine_us"],
        "systems": {"pplx-EFA": ("pplx-garden-efa", "efa"), "pplx-CX7": ("pplx-garden-cx7", "ib")},
        "ranks_per_node": 8,  # the README's command: --world-size NUM_NODES x 8, --nvlink=8
        "instance_type": None,  # not stated
        "experts": 256,  # bench_all_to_all's --num-experts default at that commit
        "backend": "pplx-garden",
        "method": "pplx-garden bench_all_to_all",
        "sample": "published figure; the statistic is not stated (the benchmark pools every rank's "
                  "per-iteration CUDA-event times)",
        "label": "published: pplx-garden README, {system} EP{ep} decode",
        "url": "https://github.com/perplexityai/pplx-garden/blob/b3c4b59bab08bfb307ec7809b88a49ba8d53d633/README.md",
    },
    "deepep": {
        "header": ["ep", "system", "dispatch_us", "dispatch_rdma_gbps", "combine_us", "combine_rdma_gbps"],
        "systems": {"DeepEP-CX7": ("deepep-ll-cx7", "ib")},
        "ranks_per_node": None,  # not stated: nodes and ranks per node are left out
        "instance_type": None,  # H800 with one CX7 InfiniBand 400 Gb/s NIC a GPU, not an instance type
        "experts": None,  # not stated
        "backend": "deepep",
        "method": "DeepEP low-latency kernels",
        "sample": "published figure; the statistic and the test that produced it are not stated",
        "label": "published: DeepEP README, low-latency {system} EP{ep} decode",
        "url": "https://github.com/deepseek-ai/DeepEP/blob/d8dd185c686cddff0c13b49f640ce9cad4030d03/README.md",
    },
    "uccl-ep": {
        "header": ["ep", "system", "dispatch_us", "dispatch_rdma_gbps", "combine_us", "combine_rdma_gbps"],
        "systems": {"UCCL-EP-p5en": ("uccl-ep-ll-p5en", "efa")},
        "ranks_per_node": 8,  # "8x H200 + 16x 200Gb/s EFA" a node
        "instance_type": "p5en.48xlarge",  # the section "On p5en"; EFA generation and rate from configs/instances/aws.yaml
        "experts": None,  # not stated with the table
        "backend": "uccl-ep",
        "method": "UCCL-EP low-latency kernels",
        "sample": "published figure; the statistic and the test that produced it are not stated",
        "label": "published: UCCL-EP README, low-latency p5en EP{ep} decode",
        "url": "https://github.com/uccl-project/uccl/blob/b9ef2050d1d856e095474857fbf9dcd9de51dc26/ep/README.md",
    },
}


def project_version() -> str:
    """ccbench's version, from the top-level CMakeLists.txt (its one source)."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "..", "CMakeLists.txt")) as f:
        m = re.search(r"project\(ccbench VERSION (\S+)", f.read())
    if not m:
        sys.exit("CMakeLists.txt: no project(ccbench VERSION ...)")
    return m.group(1)


def instance_fabric(instance_type: str) -> tuple[str, float]:
    """(efa_generation, efa_gbps) of an instance type from configs/instances/aws.yaml, the one table
    of instance profiles (its flow-style line, read without a YAML library)."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "..", "configs", "instances", "aws.yaml")) as f:
        for line in f:
            if line.strip().startswith(instance_type + ":"):
                gen = re.search(r"efa_generation: *(\w+)", line)
                gbps = re.search(r"efa_gbps: *([0-9.]+)", line)
                if gen and gbps:
                    return gen.group(1), float(gbps.group(1))
    sys.exit(f"configs/instances/aws.yaml: no efa_generation and efa_gbps for {instance_type}")


def row(backend: str, op: str, dtype: str, elem_bytes: int, time_us: float, ranks: int) -> dict:
    size = TOKENS * TOP_K * HIDDEN * elem_bytes
    # The sources publish a time per op (DeepEP also a bandwidth of its own byte count, kept in the
    # CSV): algbw is S / t (GB = 1e9 B). ccbench's own moe busbw counts the off-rank bytes of the
    # row's matrix; the routing the source drew is not published, so busbw takes the even matrix's
    # off-rank share (n-1)/n, ccbench's bus factor for these ops without a matrix
    # (core/bandwidth.cpp), as compare does.
    algbw = size / (time_us * 1e3)
    busbw = algbw * (ranks - 1) / ranks
    return {
        "op": op, "backend": backend, "dtype": dtype, "redop": "none", "in_place": False, "root": -1,
        "bytes": size, "count": TOKENS * TOP_K * HIDDEN, "ranks": ranks, "trial": 0,
        "samples_us": [time_us], "batch": 1, "samples_kind": "summary",
        "time_us": {"min": time_us, "median": time_us, "mean": time_us, "p99": time_us, "max": time_us, "ci95": None},
        "algbw_gbps": algbw, "busbw_gbps": busbw, "wrong": 0, "ci_target_met": False,
    }


def result_file(source_name: str, spec: dict, rec: dict, csv_path: str, outdir: str, version: str) -> dict:
    ranks = int(rec["ep"])
    system = {"ranks": ranks}
    if spec["ranks_per_node"]:
        system.update(nodes=ranks // spec["ranks_per_node"], ranks_per_node=spec["ranks_per_node"])
    path = spec["systems"][rec["system"]][1]
    fabric = {"path": path, "provider": path, "generation": None, "link_gbps": None}
    if spec["instance_type"]:
        system["instance_type"] = spec["instance_type"]
        fabric["generation"], fabric["link_gbps"] = instance_fabric(spec["instance_type"])
    setup = {"experts": spec["experts"], "top_k": TOP_K, "tokens_per_rank": TOKENS, "hidden": HIDDEN,
             "dispatch_dtype": "fp8_e4m3", "combine_dtype": "bfloat16"}
    config = {"backend": spec["backend"], "ops": [op for op, *_ in OPS], "redop": "none", "moe_setup": setup,
              "timing": {"method": spec["method"], "sample": spec["sample"]}}
    if spec["experts"]:
        config["moe"] = f"{spec['experts']},{TOP_K},{TOKENS},{HIDDEN}"  # as `run --moe` records its spec
    return {
        "schema_version": 1,
        "tool": {"name": "ccbench", "version": version, "imported_from": source_name,
                 "source_file": csv_path, "source_url": spec["url"]},
        "run": {"status": "complete", "started_at": "", "finished_at": "",
                "command": ["tools/moe_table_to_results.py", source_name, csv_path, outdir],
                "label": spec["label"].format(system=rec["system"], ep=ranks), "exit_code": 0, "error": None},
        "system": system,
        "fabric": fabric,
        "software": {}, "environment": {},
        "config": config,
        "results": [row(spec["backend"], op, dtype, size, float(rec[col]), ranks) for op, col, dtype, size in OPS],
    }


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[1] not in SOURCES:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    source_name, csv_path, outdir = sys.argv[1:]
    spec = SOURCES[source_name]
    with open(csv_path, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    reader = csv.DictReader(lines)
    if reader.fieldnames != spec["header"]:
        print(f"{csv_path}: header {reader.fieldnames}, expected {spec['header']}", file=sys.stderr)
        return 2
    version = project_version()
    os.makedirs(outdir, exist_ok=True)
    for rec in reader:
        if rec["system"] not in spec["systems"]:
            continue
        out_name = f"{spec['systems'][rec['system']][0]}-ep{int(rec['ep'])}-decode.json"
        with open(os.path.join(outdir, out_name), "w") as out:
            json.dump(result_file(source_name, spec, rec, csv_path, outdir, version), out, indent=2, sort_keys=True)
            out.write("\n")
        print(out_name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
