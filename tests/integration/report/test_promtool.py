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

r = run([ccbench, "report", *sample_files(data), awkward, "--format", "prometheus"])
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
             "ccbench_run_info"):
    if f"# TYPE {name} " not in text:
        sys.exit(f"FAILED: no {name}")
if 'label="back\\\\slash \\"quoted\\"\\nsecond line, {braces}=x"' not in text:
    sys.exit("FAILED: label not escaped as the exposition format says")
samples = [line for line in text.splitlines() if line and not line.startswith("#")]
print(f"PASS: promtool accepts {len(samples)} samples")
