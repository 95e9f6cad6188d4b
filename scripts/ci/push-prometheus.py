#!/usr/bin/python3
"""Push ccbench result files to a Prometheus Pushgateway, one group per run.

Usage: push-prometheus.py [--ccbench PATH] [--keep N] URL FILE...

Each file's metrics (`ccbench report FILE --format prometheus`) are PUT to
URL/metrics/job/ccbench/label@base64/<label>/run/<finish time>, replacing only that run's group.
A group per run keeps the last runs of a label side by side, which is what the rules in
configs/prometheus/ccbench-rules.yaml compare (the newest run against the one before). After the
push, groups of the same label beyond the newest --keep (default 2) are deleted, so the gateway
does not grow with every CI run. The label and finish time are read from the exporter's own
output, so they are the ones its series carry.
Exit codes: 0 pushed; 2 bad arguments or an unreadable file; 3 the gateway refused or is
unreachable.
"""
import argparse
import base64
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

FINISHED = re.compile(r'^ccbench_run_finished_timestamp_seconds\{label="((?:[^"\\]|\\.)*)"[^}]*\} (\S+)$', re.M)
INFO_LABEL = re.compile(r'^ccbench_run_info\{label="((?:[^"\\]|\\.)*)"', re.M)


def unescape(value):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def b64(value):
    return base64.urlsafe_b64encode(value.encode()).decode() or "="


def request(method, url, body=None):
    req = urllib.request.Request(url, data=body, method=method)
    if body is not None:
        req.add_header("Content-Type", "text/plain; version=0.0.4")
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ccbench", default="ccbench", help="the ccbench binary (default: ccbench on PATH)")
    ap.add_argument("--keep", type=int, default=2, help="runs of a label kept on the gateway (>= 2)")
    ap.add_argument("url", help="the Pushgateway, e.g. http://pushgateway:9091")
    ap.add_argument("files", nargs="+", metavar="FILE")
    a = ap.parse_args()
    if a.keep < 2:
        print("push-prometheus: --keep: give 2 or more (the rules compare the last two runs)", file=sys.stderr)
        return 2
    url = a.url.rstrip("/")
    for path in a.files:
        r = subprocess.run([a.ccbench, "report", path, "--format", "prometheus"], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"push-prometheus: {path}: {r.stderr.strip() or 'ccbench report failed'}", file=sys.stderr)
            return 2
        text = r.stdout
        m = FINISHED.search(text)
        label = unescape(m.group(1)) if m else None
        if label is None:
            info = INFO_LABEL.search(text)
            if not info:
                print(f"push-prometheus: {path}: no ccbench_run_info in the exporter's output", file=sys.stderr)
                return 2
            label = unescape(info.group(1))
        # A run without a finish time (never finished) is named by the push time.
        run = str(int(float(m.group(2)))) if m else str(int(time.time()))
        group = f"{url}/metrics/job/ccbench/label@base64/{b64(label)}/run/{run}"
        try:
            request("PUT", group, text.encode())
            groups = json.loads(request("GET", f"{url}/api/v1/metrics"))["data"]
        except (urllib.error.URLError, OSError, ValueError, KeyError) as e:
            print(f"push-prometheus: {url}: {e}", file=sys.stderr)
            return 3
        runs = sorted((g["labels"].get("run", "") for g in groups
                       if g["labels"].get("job") == "ccbench" and g["labels"].get("label") == label),
                      key=lambda v: int(v) if v.isdigit() else -1)
        for old in [r for r in runs[:-a.keep] if r.isdigit()]:
            old_group = f"{url}/metrics/job/ccbench/label@base64/{b64(label)}/run/{old}"
            try:
                request("DELETE", old_group)
            except (urllib.error.URLError, OSError) as e:
                print(f"push-prometheus: {url}: deleting run {old} of {label!r}: {e}", file=sys.stderr)
                return 3
        print(f"push-prometheus: {path}: label {label!r}, run {run}; {min(len(runs), a.keep)} run(s) of it kept")
    return 0


if __name__ == "__main__":
    sys.exit(main())
