#!/usr/bin/python3
"""`promtool check metrics` accepts the Prometheus output (format and lint), with awkward labels too."""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import args, run, sample_files, skip, workdir  # noqa: E402

ccbench, data = args()
promtool = shutil.which("promtool")
if not promtool:
    skip("promtool not found (Debian package prometheus)")

# A label with every character the exposition format escapes.
tmp = workdir()
awkward = os.path.join(tmp, "awkward.json")
doc = json.load(open(sample_files(data)[2]))
doc["run"]["label"] = 'back\\slash "quoted"\nsecond line, {braces}=x'
json.dump(doc, open(awkward, "w"))

# Rows judged against a model (the `expected` objects of model check -o and run --expect): one below,
# the others normal, the last not covered.
judged = os.path.join(tmp, "judged.json")
doc = json.load(open(sample_files(data)[0]))
doc["run"]["label"] = "judged"
for i, row in enumerate(doc["results"]):
    if i == len(doc["results"]) - 1:
        row["expected"] = {"verdict": "not_covered", "model": "m.json", "profile": "p5en.48xlarge",
                           "missing": "size range", "reason": "outside the sizes measured"}
        continue
    b = row["busbw_gbps"]
    row["expected"] = {"verdict": "below" if i == 0 else "normal", "metric": "busbw_gbps", "band": "99%",
                       "lo": b * (1.3 if i == 0 else 0.9), "hi": b * (1.9 if i == 0 else 1.2), "predicted": b * (1.6 if i == 0 else 1.0), "measured": b,
                       "shortfall_pct": 37.5 if i == 0 else 0.0, "basis": "measured", "model": "m.json",
                       "profile": "p5en.48xlarge"}
json.dump(doc, open(judged, "w"))

r = run([ccbench, "report", *sample_files(data), awkward, judged, "--format", "prometheus"])
if r.returncode != 0:
    sys.exit(f"report failed: {r.stderr}")
text = r.stdout
out = os.path.join(tmp, "ccbench.prom")
open(out, "w").write(text)
check = run([promtool, "check", "metrics"], input=text)
print(check.stdout + check.stderr)
if check.returncode != 0:
    sys.exit(f"FAILED: promtool check metrics exit {check.returncode} (file {out})")
for name in ("ccbench_busbw_gbps", "ccbench_algbw_gbps", "ccbench_time_seconds", "ccbench_wrong_elements",
             "ccbench_run_info", "ccbench_expected_verdict", "ccbench_expected_shortfall_pct",
             "ccbench_expected_busbw_gbps"):
    if f"# TYPE {name} " not in text:
        sys.exit(f"FAILED: no {name}")
if 'label="back\\\\slash \\"quoted\\"\\nsecond line, {braces}=x"' not in text:
    sys.exit("FAILED: label not escaped as the exposition format says")
samples = [line for line in text.splitlines() if line and not line.startswith("#")]
print(f"PASS: promtool accepts {len(samples)} samples")
