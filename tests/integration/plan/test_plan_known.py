#!/usr/bin/python3
"""The plan's migration interval through a real fitted model with known parameters.

Result files are generated from one known curve, t = 30 us + S x 2(n-1)/n / (40 GB/s) (an all-reduce
on p5.48xlarge, 2/4/8 nodes x 8 ranks), imported with `ccbench import nccl-tests` and fitted with
`ccbench model fit`. A DDP job of 1e9 fp32 parameters on 4 nodes x 8 all-reduces 4e9 bytes of
gradients in 1 GiB buckets: ceil(3.73) = 4 buckets of 1e9 bytes. By hand, per call on p5:
30 + 1e9 x 62/32 / 40e3 = 30 + 48437.5 = 48467.5 us; 4 calls: 193870 us. p6-b300 is priced from its
spec (6400 Gbps against p5's 3200): the bandwidth term halves, 30 + 24218.75 = 24248.75 us per call,
96995 us per step. Delta -96875 us, ratio 0.50031."""
import json
import os
import subprocess
import sys
import tempfile

if len(sys.argv) != 3:
    sys.exit(f"usage: {sys.argv[0]} CCBENCH SOURCE_DIR")
ccbench = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="ccbench-plan-known-")
failures = []


def run(*cmd):
    r = subprocess.run([ccbench, *cmd], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"ccbench {' '.join(cmd)}: exit {r.returncode}: {r.stderr}")
    return r


def time_us(size, ranks):
    return 30.0 + size * 2 * (ranks - 1) / ranks / 40e3


files = []
for nodes in (2, 4, 8):
    ranks = nodes * 8
    lines = ["#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
             "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)"]
    size = 1024
    while size <= 4 << 30:
        t = time_us(size, ranks)
        alg = size / t / 1e3
        bus = alg * 2 * (ranks - 1) / ranks
        lines.append(f"{size:>12d} {size // 4:>12d}     float     sum      -1 {t:>9.2f} {alg:>7.2f} {bus:>7.2f}      0 "
                     f"{t:>9.2f} {alg:>7.2f} {bus:>7.2f}      0")
        size *= 4
    log = os.path.join(tmp, f"ar-{nodes}n.txt")
    open(log, "w").write("\n".join(lines) + "\n")
    out = os.path.join(tmp, f"ar-{nodes}n.json")
    run("import", "nccl-tests", log, "--op", "allreduce", "--ranks", str(ranks), "--nodes", str(nodes),
        "--instance-type", "p5.48xlarge", "--link-gbps", "3200", "--out", out)
    files.append(out)
model = os.path.join(tmp, "model.json")
run("model", "fit", *files, "-o", model)

workload = os.path.join(tmp, "ddp.yaml")
open(workload, "w").write(
    "model: {parameters: 1B, layers: 24, hidden: 2048}\ndtype: fp32\nsequence_length: 2048\nmicro_batch: 4\n"
    "parallel: {ranks: 32, ranks_per_node: 8, dp: 32}\nsharding: none\nbucket: 1G\n")
plan = json.loads(run("model", "plan", model, "--workload", workload, "--profiles", "p5.48xlarge,p6-b300.48xlarge",
                      "--migrate", "p5.48xlarge:p6-b300.48xlarge", "--format", "json").stdout)

c = plan["collectives"]
if [(x["op"], x["bytes"], x["count"], x["group"], x["nodes"]) for x in c] != [("allreduce", 1_000_000_000, 4, 32, 4)]:
    failures.append(f"collectives: {c}")
by = {p["profile"]: p for p in plan["profiles"]}


def close(what, got, want, rel):
    ok = abs(got - want) <= rel * abs(want)
    print(f"  {'ok' if ok else 'FAIL'}: {what}: {got:.6g} (hand: {want:.6g}, within {rel:.1%})")
    if not ok:
        failures.append(f"{what}: {got} vs {want}")


def inside(what, interval, want):
    ok = interval["lo"] <= want <= interval["hi"]
    print(f"  {'ok' if ok else 'FAIL'}: {what}: [{interval['lo']:.6g}, {interval['hi']:.6g}] holds {want:.6g}")
    if not ok:
        failures.append(f"{what}: {interval} does not hold {want}")


close("p5 step", by["p5.48xlarge"]["total_us"]["value"], 193870.0, 0.005)
inside("p5 step band", by["p5.48xlarge"]["total_us"], 193870.0)
close("p6-b300 step", by["p6-b300.48xlarge"]["total_us"]["value"], 96995.0, 0.005)
inside("p6-b300 step band", by["p6-b300.48xlarge"]["total_us"], 96995.0)
if not by["p6-b300.48xlarge"]["from_spec"] or by["p5.48xlarge"]["from_spec"]:
    failures.append("from_spec flags")
m = plan["migration"]
close("delta", m["delta_total_us"]["value"], -96875.0, 0.005)
inside("delta interval", m["delta_total_us"], -96875.0)
close("ratio", m["ratio_total"]["value"], 96995.0 / 193870.0, 0.005)
inside("ratio interval", m["ratio_total"], 96995.0 / 193870.0)
# The interval is the bands' opposite ends.
p5, b3 = by["p5.48xlarge"]["total_us"], by["p6-b300.48xlarge"]["total_us"]
close("delta lo = lo(B) - hi(A)", m["delta_total_us"]["lo"], b3["lo"] - p5["hi"], 1e-9)
close("delta hi = hi(B) - lo(A)", m["delta_total_us"]["hi"], b3["hi"] - p5["lo"], 1e-9)

if failures:
    print("\nFAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("all ok")
