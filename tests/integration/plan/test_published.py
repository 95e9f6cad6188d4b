#!/usr/bin/python3
"""results/published: every result file is what `ccbench import` makes of its source table today
(the command each file records, rerun), and known answers from the published tables: layouts,
the srun '0: ' prefix, sizes, times and the published busbw."""
import json
import os
import subprocess
import sys
import tempfile

if len(sys.argv) != 3:
    sys.exit(f"usage: {sys.argv[0]} CCBENCH SOURCE_DIR")
ccbench, src = sys.argv[1], sys.argv[2]
published = os.path.join(src, "results/published")
tmp = tempfile.mkdtemp(prefix="ccbench-published-")
failures = []

files = sorted(f for f in os.listdir(published) if f.endswith(".json"))
if len(files) != 11:
    failures.append(f"expected 11 published result files, found {len(files)}: {files}")
for name in files:
    committed = json.load(open(os.path.join(published, name)))
    cmd = list(committed["run"]["command"])
    if cmd[:2] != ["ccbench import", "nccl-tests"]:
        failures.append(f"{name}: run.command {cmd[:2]} is not an nccl-tests import")
        continue
    out = os.path.join(tmp, name)
    cmd[cmd.index("--out") + 1] = out
    r = subprocess.run([ccbench, "import", *cmd[1:]], cwd=published, capture_output=True, text=True)
    if r.returncode != 0 or "warning" in r.stderr:
        failures.append(f"{name}: import exit {r.returncode}: {r.stderr.strip()}")
        continue
    fresh = json.load(open(out))
    fresh["run"]["command"] = committed["run"]["command"]
    # tool.version and tool.git name the build that imported, not the data.
    for key in ("version", "git"):
        if key in committed.get("tool", {}):
            fresh.setdefault("tool", {})[key] = committed["tool"][key]
    if fresh != committed:
        failures.append(f"{name}: differs from a fresh import of {committed['tool']['source_file']}")
    else:
        print(f"  ok: {name} = import of {committed['tool']['source_file']}")


def rows(name):
    return json.load(open(os.path.join(published, name)))


# The awsome-distributed-training table: srun -l's "0: " prefix, 2 nodes x 8, 8 B - 16 GiB.
d = rows("p5-awsome-2n-allreduce.json")
last = [r for r in d["results"] if r["bytes"] == 17179869184 and not r["in_place"]]
checks = [
    (d["system"]["nodes"], 2), (d["system"]["ranks_per_node"], 8), (d["system"]["instance_type"], "p5.48xlarge"),
    (len(d["results"]), 64), (len(last), 1),
    (last[0]["time_us"]["median"] if last else None, 66132.0),
    (last[0]["reported_busbw_gbps"] if last else None, 487.09),
]
# The HyperPod CSV at 32 nodes, 8 GiB: algbw 161.18 GB/s -> time 8589934592 / 161.18e3 us
# (printed to 0.1 us: 53294.0), busbw 321.10.
d = rows("p5-hyperpod-32n-allreduce.json")
r = [x for x in d["results"] if x["bytes"] == 8589934592 and not x["in_place"]][0]
checks += [(d["system"]["nodes"], 32), (d["system"]["ranks"], 256), (r["time_us"]["median"], 53294.0),
           (abs(r["busbw_gbps"] - 321.10) < 0.02, True), (r["reported_busbw_gbps"], 321.10)]
d = rows("p5-hyperpod-4n-alltoall.json")
r = [x for x in d["results"] if x["bytes"] == 2147483648 and x["in_place"]][0]
# busbw from the derived time agrees with the published one to the rounding of the published algbw.
checks += [(r["op"], "alltoall"), (r["reported_busbw_gbps"], 54.00), (abs(r["busbw_gbps"] - 54.00) < 0.02, True)]
for got, want in checks:
    if got != want:
        failures.append(f"{got!r} != {want!r}")

if failures:
    print("\nFAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("all ok")
