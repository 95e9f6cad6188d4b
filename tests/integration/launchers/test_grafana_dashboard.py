#!/usr/bin/python3
"""configs/grafana/ccbench-dashboard.json reads metrics `ccbench report --format prometheus` writes.

Checks: every PromQL expression parses (promtool check rules, template variables substituted),
names only metrics and labels the exporter emits, and uses only template variables the dashboard
defines; panel ids are unique and every panel has a position.
Usage: test_grafana_dashboard.py CCBENCH DASHBOARD DATA_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ccbench, dashboard_path, data = sys.argv[1:4]
dash = json.load(open(dashboard_path))
problems = []

prom = subprocess.run([ccbench, "report", os.path.join(data, "p5en-nccl.json"), "--format", "prometheus"],
                      capture_output=True, text=True, check=True).stdout
metrics, labels = set(), set()
for line in prom.splitlines():
    if line.startswith("# TYPE "):
        name, kind = line.split()[2:4]
        metrics.add(name)
        if kind == "summary":
            metrics.update({name + "_sum", name + "_count"})
    elif line and not line.startswith("#"):
        labels.update(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', line))

variables = {v["name"] for v in dash["templating"]["list"]}
panels = []
for p in dash["panels"]:
    panels.append(p)
    panels.extend(p.get("panels", []))
ids = [p["id"] for p in panels]
if len(ids) != len(set(ids)):
    problems.append(f"duplicate panel ids {ids}")
exprs = []
for p in panels:
    if "gridPos" not in p:
        problems.append(f"panel {p.get('title')} has no gridPos")
    for t in p.get("targets", []):
        exprs.append((p["title"], t["expr"]))
    for text in [p.get("title", "")] + [t.get("legendFormat", "") for t in p.get("targets", [])]:
        for var in re.findall(r"\$\{?(\w+)", text):
            if var not in variables:
                problems.append(f"{p['title']}: undefined variable ${var}")
for v in dash["templating"]["list"]:
    q = v.get("definition") or ""
    if q.startswith("label_values"):
        exprs.append((f"variable {v['name']}", q))

rules = []
for title, expr in exprs:
    for var in re.findall(r"\$\{?(\w+)\}?", expr):
        if var not in variables:
            problems.append(f"{title}: undefined variable ${var}")
    for name in re.findall(r"\bccbench_[a-z0-9_]+", expr):
        if name not in metrics:
            problems.append(f"{title}: metric {name} is not exported")
    for group in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr):
        for label in filter(None, (s.strip() for s in group.split(","))):
            if label not in labels:
                problems.append(f"{title}: label {label} is not exported")
    for label in re.findall(r"([a-zA-Z_]\w*)\s*=~?\s*\"", expr):
        if label not in labels:
            problems.append(f"{title}: label {label} is not exported")
    m = re.fullmatch(r"label_values\((?:(.*),\s*)?(\w+)\)", expr)
    if m:
        if m.group(2) not in labels:
            problems.append(f"{title}: label {m.group(2)} is not exported")
        expr = m.group(1) or "up"
    rules.append(re.sub(r"\$\{?\w+\}?", "1024", expr))

promtool = shutil.which("promtool")
if promtool:
    rule_file = os.path.join(tempfile.mkdtemp(), "rules.yml")
    with open(rule_file, "w") as f:
        f.write("groups:\n  - name: dashboard\n    rules:\n")
        for i, e in enumerate(rules):
            f.write(f"      - record: dashboard:expr{i}\n        expr: {json.dumps(e)}\n")
    r = subprocess.run([promtool, "check", "rules", rule_file], capture_output=True, text=True)
    print(r.stdout.strip(), r.stderr.strip())
    if r.returncode != 0:
        problems.append("promtool check rules rejected an expression")
else:
    print("promtool not found (Debian package prometheus): PromQL syntax not checked")

if problems:
    print("FAILED:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"PASS: {len(panels)} panels, {len(exprs)} expressions over {len(metrics)} exported metrics")
