#!/usr/bin/python3
"""`ccbench model checkpoint`: the JSON fields scripts read, every figure recomputed here from the
inputs (FSx's per-TiB table, Young, Daly, Daly's goodput), a measured result file scaled and capped,
and bad input (exit 2, one line naming the flag). docs/model.md, "What checkpoints cost a job"."""
import json
import math
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from cli_checks import check, failures, run_ccbench  # noqa: E402

if len(sys.argv) != 3:
    sys.exit(f"usage: {sys.argv[0]} CCBENCH SOURCE_DIR")
ccbench, src = sys.argv[1], sys.argv[2]
workload = os.path.join(src, "configs/workloads/llama3-70b-mlperf-storage.yaml")
measured = os.path.join(src, "tests/data/checkpoint/posix-2ranks-3trials.json")
# Llama 3: 419 unexpected interruptions in 54 days on 2,048 nodes -> node MTBF in hours.
node_mtbf_h = 54 * 24 * 2048 / 419
base = ["model", "checkpoint", "--workload", workload, "--nodes", "2048", "--node-mtbf-hours", f"{node_mtbf_h}"]
BYTES = 988400058368  # 70.6e9 x 14 bytes over 64 writers, each rounded up to 4 KiB (shard_plan)


def run(args):
    print("$ ccbench", " ".join(args), flush=True)
    return run_ccbench(ccbench, args, 60)


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b))


def daly(delta, m):
    if delta >= 2 * m:
        return m
    x = delta / (2 * m)
    return math.sqrt(2 * delta * m) * (1 + math.sqrt(x) / 3 + x / 9) - delta


def goodput(tau, delta, r, m):
    return tau / (m * math.exp(r / m) * math.expm1((tau + delta) / m))


# The two configurations of the README, sized so one checkpoint writes within 60 s.
code, out, err = run(base + ["--config", "p5en@fsx:PERSISTENT_2-250", "--config", "p6-b300@fsx:PERSISTENT_2-1000",
                             "--write-within", "60", "--restart-s", "300", "--format", "json"])
check(code == 0, f"json run: exit {code}: {err}")
doc = json.loads(out) if code == 0 else {"configs": [{}, {}]}
m = node_mtbf_h * 3600 / 2048
check(doc.get("checkpoint_bytes") == BYTES, f"checkpoint_bytes {doc.get('checkpoint_bytes')}")
check(close(doc.get("job_mtbf_s", 0), m), f"job_mtbf_s {doc.get('job_mtbf_s')} vs {m}")
for c, per_tib, tib, profile in ((doc["configs"][0], 250, 67.2, "p5en.48xlarge"),
                                 (doc["configs"][1], 1000, 16.8, "p6-b300.48xlarge")):
    for key in ("checkpoint_bytes", "blocking_s", "time_to_durable_s", "job_mtbf_s", "young_interval_s",
                "daly_interval_s", "goodput"):
        check(key in c, f"{profile}: field {key} missing")
    if "goodput" not in c:
        continue
    check(c["profile"] == profile, f"profile {c['profile']}")
    # 988.4e9 B / 60 s / (per_tib MB/s/TiB) -> TiB, rounded up to FSx's 2.4 TiB steps.
    check(close(c["capacity_tib"], tib), f"{profile}: capacity {c['capacity_tib']} (want {tib})")
    gbps = per_tib * tib / 1000
    check(close(c["write_gbps"], gbps), f"{profile}: write {c['write_gbps']} GB/s (want {gbps})")
    delta = BYTES / (gbps * 1e9)
    check(close(c["blocking_s"], delta) and close(c["time_to_durable_s"], delta), f"{profile}: blocking {c}")
    r = 300 + BYTES / (c["read_gbps"] * 1e9)
    check(close(c["restart_s"], r), f"{profile}: restart {c['restart_s']} (want {r})")
    check(close(c["young_interval_s"], math.sqrt(2 * delta * m)), f"{profile}: young {c['young_interval_s']}")
    tau = daly(delta, m)
    check(close(c["daly_interval_s"], tau), f"{profile}: daly {c['daly_interval_s']} (want {tau})")
    g = goodput(tau, delta, r, m)
    check(close(c["goodput"], g), f"{profile}: goodput {c['goodput']} (want {g})")
    lost = c["lost"]
    check(close(c["goodput"] + lost["checkpoints"] + lost["restarts"] + lost["rework"], 1.0),
          f"{profile}: fractions do not sum to 1: {lost}")
    check(c["goodput_lo"] <= c["goodput"] <= c["goodput_hi"], f"{profile}: goodput band {c}")
# PERSISTENT_2-250 bursts to 500 MB/s/TiB: its blocking band reaches half the baseline time.
c0 = doc["configs"][0]
if "blocking_lo_s" in c0:
    check(close(c0["blocking_lo_s"], c0["blocking_s"] / 2), f"burst band {c0['blocking_lo_s']} {c0['blocking_s']}")
check("delta" in doc and close(doc["delta"]["goodput"], doc["configs"][1]["goodput"] - c0["goodput"]),
      f"delta {doc.get('delta')}")

# Measured: per-node rate = each trial's GB/s over the file's nodes, median; x 2048 nodes, then
# capped by the stated FSx file system (value at its baseline, hi at its burst).
rows = json.load(open(measured))
per_node = statistics.median(r["busbw_gbps"] / rows["system"]["nodes"] for r in rows["results"]
                             if r["op"] == "checkpoint_write")
code, out, err = run(base + ["--config", f"p5en@measured:{measured}", "--format", "json"])
check(code == 0, f"measured: exit {code}: {err}")
if code == 0:
    c = json.loads(out)["configs"][0]
    check(close(c["write_gbps"], min(per_node * 2048, 400 * 2048)), f"measured write {c['write_gbps']}")
    check("measured" in c["limited_by"], f"measured limited_by {c['limited_by']}")
code, out, err = run(base + ["--config", f"p5en@measured:{measured},fsx:PERSISTENT_2-250:9.6", "--format", "json"])
check(code == 0, f"measured + fsx: exit {code}: {err}")
if code == 0:
    c = json.loads(out)["configs"][0]
    check(close(c["write_gbps"], 2.4) and close(c["write_hi_gbps"], 4.8), f"capped write {c}")
    check(c["limited_by"].startswith("FSx PERSISTENT_2-250"), f"capped limited_by {c['limited_by']}")

# A measured --tiered run (tests/data: emulated-local 24 MiB/s, drained to emulated-fsx 12 MiB/s):
# blocking from its blocking_us (bytes / blocking per node), durable from the row's time.
tiered = os.path.join(src, "tests/data/checkpoint/tiered-emulated-local-fsx.json")
rows = json.load(open(tiered))
writes = [r for r in rows["results"] if r["op"] == "checkpoint_write"]
nodes = rows["system"]["nodes"]
blocking_per_node = statistics.median(r["bytes"] / (r["blocking_us"] * 1e3) / nodes for r in writes)
durable_per_node = statistics.median(r["busbw_gbps"] / nodes for r in writes)
code, out, err = run(base + ["--config", f"p5en@measured:{tiered}", "--format", "json"])
check(code == 0, f"tiered measured: exit {code}: {err}")
if code == 0:
    c = json.loads(out)["configs"][0]
    check(close(c["blocking_s"], BYTES / (blocking_per_node * 2048 * 1e9)), f"tiered blocking {c['blocking_s']}")
    check(close(c["time_to_durable_s"], BYTES / (durable_per_node * 2048 * 1e9)), f"tiered durable {c}")
    check(c["blocking_s"] < c["time_to_durable_s"], "tiered: blocking not below durable")
    check(close(c["daly_interval_s"], daly(c["blocking_s"], m)), "tiered: Daly at the blocking time")
code, out, err = run(base + ["--config", f"p5en@measured:{tiered}", "--async-gbps-per-node", "10"])
check(code == 2 and "--async-gbps-per-node: the tiered rows" in err, f"tiered + async: exit {code}: {err}")

# Async: blocked only for the copy off the GPUs (bytes per node / rate); durable = copy + write.
code, out, err = run(base + ["--config", "p5en@fsx:PERSISTENT_2-1000:16.8", "--async-gbps-per-node", "10",
                             "--format", "json"])
check(code == 0, f"async: exit {code}: {err}")
if code == 0:
    c = json.loads(out)["configs"][0]
    copy = BYTES / 2048 / 10e9
    check(close(c["blocking_s"], copy), f"async blocking {c['blocking_s']} (want {copy})")
    check(close(c["time_to_durable_s"], copy + BYTES / 16.8e9), f"async durable {c['time_to_durable_s']}")

# Text output names the figures.
code, out, err = run(base + ["--config", "p5en@fsx:PERSISTENT_2-250:67.2"])
check(code == 0 and "Young" in out and "Daly" in out and "goodput" in out and "time to durable" in out,
      f"text: exit {code}: {out}{err}")

# Bad input: exit 2, one line naming the flag.
tmp = tempfile.mkdtemp(prefix="ccbench-model-ckpt-")
cfg = ["--config", "p5en@fsx:PERSISTENT_2-250:67.2"]
bad = [
    (["model", "checkpoint", "--workload", workload, "--node-mtbf-hours", "6000"] + cfg, "--nodes"),
    (["model", "checkpoint", "--workload", workload, "--nodes", "8"] + cfg, "--node-mtbf-hours"),
    (["model", "checkpoint", "--nodes", "8", "--node-mtbf-hours", "6000"] + cfg, "--workload"),
    (base, "--config"),
    (base[:-1] + ["0"] + cfg, "--node-mtbf-hours"),
    (base[:-1] + ["nan"] + cfg, "--node-mtbf-hours"),
    (base[:-1] + ["-5"] + cfg, "--node-mtbf-hours"),
    (["model", "checkpoint", "--workload", workload, "--nodes", "0", "--node-mtbf-hours", "6000"] + cfg, "--nodes"),
    (base + cfg + cfg + cfg, "--config"),
    (base + ["--config", "p5en"], "--config p5en: expected PROFILE@TIER"),
    (base + ["--config", "p9@fsx:PERSISTENT_2-250:1.2"], "--config: unknown instance profile 'p9'"),
    (base + ["--config", "p5en@fsx:PERSISTENT_2-300:1.2"], "--fsx-throughput-per-tib: 300"),
    (base + ["--config", "p5en@nvme"], "--config: tier 'nvme': unknown tier"),
    (base + ["--config", "p5en@fsx:PERSISTENT_2-250"], "--write-within: needed"),
    (base + cfg + ["--write-within", "0"], "--write-within"),
    (base + cfg + ["--restart-s", "-1"], "--restart-s"),
    (base + cfg + ["--async-gbps-per-node", "inf"], "--async-gbps-per-node"),
    (base + cfg + ["--keep", "0"], "--keep"),
    (base + ["--config", "p5en@s3"] + ["--part-size", "1M"], "--part-size: 1M is outside S3's 5M..5G"),
    (base + cfg + ["--format", "xml"], "--format"),
    (["model", "checkpoint", "--workload", os.path.join(tmp, "none.yaml"), "--nodes", "8", "--node-mtbf-hours",
      "6000"] + cfg, "none.yaml"),
    (base + ["--config", f"p5en@measured:{os.path.join(tmp, 'missing.json')}"], "missing.json"),
    (base + ["--config", f"p5en@measured:{workload}"], workload),
]
for args, needle in bad:
    code, out, err = run(args)
    lines = err.strip().splitlines()
    check(code == 2 and needle in err and len(lines) == 1 and out == "",
          f"{args[2:]}: exit {code} (want 2), stderr {err.strip()!r} (want one line naming {needle!r})")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok")
