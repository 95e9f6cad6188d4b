#!/usr/bin/env python3
"""Turn a summary CSV of nccl-tests results into nccl-tests' text table, one file per node count.

The CSV (Nodes,GPUs,size(MB),iterations,blocking,out algbw,out busbw,in algbw,in busbw) keeps the
bandwidths nccl-tests printed but not its time column. The time is derived, not measured:
time_us = size_bytes / (algbw_GBps * 1e3), since nccl-tests defines algbw = size / time with GB = 1e9 B.
The busbw columns are copied as published, so `ccbench import` cross-checks them against its own
busbw from that time and the rank count.

usage: csv_to_nccl_tests.py CSV OP OUTDIR   (OP: all_reduce or alltoall)
"""
import csv
import os
import sys


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[2] not in ("all_reduce", "alltoall"):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    src, op, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
    redop = "sum" if op == "all_reduce" else "none"
    by_nodes: dict[int, list[list[str]]] = {}
    with open(src, newline="") as f:
        rows = csv.reader(f)
        header = next(rows)
        if [h.strip() for h in header[:3]] != ["Nodes", "GPUs", "size(MB)"]:
            print(f"{src}: unexpected header {header}", file=sys.stderr)
            return 2
        for line_no, r in enumerate(rows, start=2):
            r = [c.strip() for c in r]
            if len(r) != 9:
                print(f"{src}:{line_no}: expected 9 fields, got {len(r)}", file=sys.stderr)
                return 2
            by_nodes.setdefault(int(r[0]), []).append(r)
    os.makedirs(outdir, exist_ok=True)
    for nodes, rows in sorted(by_nodes.items()):
        gpus = int(rows[0][1])
        path = os.path.join(outdir, f"{op}_perf_{nodes}x_p5.48xlarge_{gpus}ranks.txt")
        with open(path, "w") as out:
            out.write(f"# {op}_perf on {nodes} nodes, {gpus} ranks: converted from {os.path.basename(src)} by\n")
            out.write("# results/published/tools/csv_to_nccl_tests.py; time = size / algbw (derived, not published)\n")
            out.write("#       size         count      type   redop    root     time   algbw   busbw #wrong"
                      "     time   algbw   busbw #wrong\n")
            out.write("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
                      "     (us)  (GB/s)  (GB/s)\n")
            for r in rows:
                size = int(r[2]) * 1024 * 1024  # nccl-tests -b 32M means 32 MiB
                out_alg, out_bus, in_alg, in_bus = (float(x) for x in r[5:9])
                t_out = size / (out_alg * 1e3)
                t_in = size / (in_alg * 1e3)
                out.write(f"{size:>12d}  {size // 4:>12d}     float  {redop:>6s}      -1  {t_out:>9.1f} {out_alg:>7.2f} "
                          f"{out_bus:>7.2f}      0  {t_in:>9.1f} {in_alg:>7.2f} {in_bus:>7.2f}      0\n")
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
