#!/usr/bin/python3
"""`ccbench model plan` and `ccbench report --model/--plan`: exit codes, messages naming file and key,
and the plan of the shipped 70B workload priced with a model fitted on results/published."""
import glob
import json
import os
import subprocess
import sys
import tempfile

if len(sys.argv) != 3:
    sys.exit(f"usage: {sys.argv[0]} CCBENCH SOURCE_DIR")
ccbench, src = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="ccbench-plan-")
failures = []


def run(*cmd):
    print("$ ccbench", " ".join(cmd), flush=True)
    return subprocess.run([ccbench, *cmd], capture_output=True, text=True)


def expect(cmd, code, *needles):
    r = run(*cmd)
    text = r.stdout + r.stderr
    missing = [n for n in needles if n not in text]
    if r.returncode != code or missing:
        failures.append(f"{cmd}: exit {r.returncode} (want {code}); missing {missing}; output {text.strip()[:400]!r}")
    else:
        print(f"  ok: exit {code}: {r.stderr.strip()[:200]}")
    return r


workload = os.path.join(src, "configs/workloads/dense-70b-fsdp.yaml")
model = os.path.join(tmp, "published.json")
expect(["model", "fit", *sorted(glob.glob(os.path.join(src, "results/published/*.json"))), "-o", model], 0)

# Bad workloads: exit 2, the file, line and key named.
text = open(workload).read()
unknown = os.path.join(tmp, "unknown.yaml")
open(unknown, "w").write(text.replace("sharding: fsdp", "sharding: fsdp\nshardng: 8"))
expect(["model", "plan", model, "--workload", unknown], 2, unknown, "unknown key 'shardng'")
nested = os.path.join(tmp, "nested.yaml")
open(nested, "w").write(text.replace("  tp: 1\n", "  tp: 1\n  cp: 2\n"))
expect(["model", "plan", model, "--workload", nested], 2, nested, "unknown key 'parallel.cp'")
degrees = os.path.join(tmp, "degrees.yaml")
open(degrees, "w").write(text.replace("dp: 256", "dp: 128"))
expect(["model", "plan", model, "--workload", degrees], 2, degrees + ":",
       "parallel: tp x pp x dp = 1 x 1 x 128 = 128, but ranks is 256")
expect(["model", "plan", model, "--workload", os.path.join(tmp, "none.yaml")], 2, "none.yaml")
expect(["model", "plan", os.path.join(tmp, "no-model.json"), "--workload", workload], 2, "no-model.json")
expect(["model", "plan", model, "--workload", workload, "--migrate", "p5en.48xlarge"], 2, "--migrate")
expect(["model", "plan", model, "--workload", workload, "--format", "pdf"], 2, "--format")
expect(["model", "plan", model, "--workload", workload, "--out", "/nonexistent-ccbench-plan/dir/p.txt"], 2,
       "--out /nonexistent-ccbench-plan/dir/p.txt: folder /nonexistent-ccbench-plan does not exist")

# The 70B plan on p5en and p6-b300 (neither measured: priced from their specs).
r = expect(["model", "plan", model, "--workload", workload, "--migrate", "p5en.48xlarge:p6-b300.48xlarge"], 0,
           "Migration p5en.48xlarge -> p6-b300.48xlarge (2 collectives priced on both)", "from spec")
plan_file = os.path.join(tmp, "plan.json")
expect(["model", "plan", model, "--workload", workload, "--migrate", "p5en.48xlarge:p6-b300.48xlarge",
        "--format", "json", "--out", plan_file], 0, plan_file)
plan = json.load(open(plan_file))
ag, rs = plan["collectives"]
checks = [
    (ag["op"], "allgather"), (ag["bytes"], 1_750_000_000), (ag["count"], 640), (ag["group"], 256), (ag["nodes"], 32),
    (rs["op"], "reduce_scatter"), (rs["count"], 320),
    ([p["profile"] for p in plan["profiles"]], ["p5.48xlarge", "p5en.48xlarge", "p6-b300.48xlarge"]),
]
for got, want in checks:
    if got != want:
        failures.append(f"plan.json: {got!r} != {want!r}")
m = plan["migration"]
by = {p["profile"]: p for p in plan["profiles"]}
delta = by["p6-b300.48xlarge"]["total_us"]["value"] - by["p5en.48xlarge"]["total_us"]["value"]
if abs(m["delta_total_us"]["value"] - delta) > 1e-6 * abs(delta):
    failures.append(f"migration delta {m['delta_total_us']} != {delta}")
if not m["delta_total_us"]["lo"] <= m["delta_total_us"]["value"] <= m["delta_total_us"]["hi"]:
    failures.append(f"migration delta outside its interval: {m['delta_total_us']}")

# Reports: the plan's tables, the model's curves over the measured points.
expect(["report", "--plan", plan_file, "--format", "markdown"], 0,
       "| 1 | allgather | 1.63 GiB | 256 | 32 | 640 | yes | parameter all-gather, per layer (forward and backward) |")
expect(["report", "--plan", plan_file, "--format", "csv"], 2, "--plan")
bad_plan = os.path.join(tmp, "bad-plan.json")
json.dump({**plan, "plan_version": 7}, open(bad_plan, "w"))
expect(["report", "--plan", bad_plan], 2, bad_plan, "plan_version: is 7")
four = os.path.join(src, "results/published/p5-hyperpod-4n-allreduce.json")
expect(["report", four, "--model", model, "--format", "markdown"], 0,
       "### allreduce on p5.48xlarge, 4 nodes x 8 ranks (model: ", "| size | published: aws-gpu-communication-benchmark, "
       "4 x p5 busbw GB/s | model busbw GB/s [90% band] | measured / model |")
html = os.path.join(tmp, "r.html")
expect(["report", four, "--model", model, "--plan", plan_file, "--out", html], 0, html)
page = open(html).read()
for needle in ('<section class="model">', 'stroke-dasharray="6 4"', '<section class="plan">',
               "Migration p5en.48xlarge -&gt; p6-b300.48xlarge"):
    if needle not in page:
        failures.append(f"r.html lacks {needle!r}")

if failures:
    print("\nFAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("all ok")
