#!/usr/bin/python3
"""The Grafana dashboard's queries and the regression alert on a real Prometheus and Pushgateway.

Starts Debian's prometheus and prometheus-pushgateway on loopback, pushes two result files with
different labels the way a CI job does (scripts/ci/push-prometheus.py), waits for a scrape, then
runs every panel expression of configs/grafana/ccbench-dashboard.json through Prometheus's HTTP
query API with the template variables set, and checks each returns the series the panel is meant
to show: by metric and labels, with the values computed here from the result files themselves.
Then plants a regression (a second run of one label with busbw 20% lower from 1 MiB up, and wrong
elements at one size): the alert of configs/prometheus/ccbench-rules.yaml fires for exactly those
sizes of that label, and the panels show the newest run, not the better of the two. A third run
equal to the second resolves the alert, and the gateway keeps only the last two runs.
Usage: test_prometheus_live.py CCBENCH DASHBOARD RULES PUSH_SCRIPT DATA_DIR
Exit 77 (skip) when prometheus or prometheus-pushgateway is not installed.
"""
import copy
import datetime
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ccbench, dashboard_path, rules_path, push_script, data = sys.argv[1:6]
prometheus = shutil.which("prometheus")
pushgateway = shutil.which("prometheus-pushgateway")
if not prometheus or not pushgateway:
    print("SKIP: needs prometheus and prometheus-pushgateway (Debian packages)")
    sys.exit(77)

LABELS = ("p5en EFAv3", "p6-b200 EFAv4")
OP, BYTES = "allreduce", 2097152
SLOW_FROM_BYTES, SLOWDOWN = 1048576, 0.8
WRONG_AT = 8388608
problems = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def wait_for(what, fn, timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            value = fn()
            if value:
                return value
        except OSError:
            pass
        if time.monotonic() > deadline:
            print(f"FAILED: timed out after {timeout_s} s waiting for {what}")
            sys.exit(1)
        time.sleep(0.5)


work = tempfile.mkdtemp(prefix="ccbench-prom-")
pgw_port, prom_port = free_port(), free_port()
pgw_url, prom_url = f"http://127.0.0.1:{pgw_port}", f"http://127.0.0.1:{prom_port}"
with open(os.path.join(work, "prometheus.yml"), "w") as f:
    f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [{json.dumps(os.path.abspath(rules_path))}]
scrape_configs:
  - job_name: pushgateway
    honor_labels: true
    static_configs: [{{targets: ["127.0.0.1:{pgw_port}"]}}]
""")
daemons = [
    subprocess.Popen([pushgateway, f"--web.listen-address=127.0.0.1:{pgw_port}", "--log.level=warn",
                      f"--persistence.file={work}/pushgateway.data"],  # Debian defaults to /var/lib
                     stdout=open(os.path.join(work, "pushgateway.log"), "w"), stderr=subprocess.STDOUT),
    subprocess.Popen([prometheus, f"--config.file={work}/prometheus.yml", f"--storage.tsdb.path={work}/tsdb",
                      f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn"],
                     stdout=open(os.path.join(work, "prometheus.log"), "w"), stderr=subprocess.STDOUT),
]


def stop():
    for d in daemons:
        d.terminate()
    for d in daemons:
        try:
            d.wait(timeout=10)
        except subprocess.TimeoutExpired:
            d.kill()


def query(expr):
    r = get(f"{prom_url}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    return {frozenset(s["metric"].items()): float(s["value"][1]) for s in r["data"]["result"]}


def push(*files):
    r = subprocess.run([push_script, "--ccbench", ccbench, pgw_url, *files], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAILED: push-prometheus.py exit {r.returncode}: {r.stderr.strip()}")
        stop()
        sys.exit(1)
    print(r.stdout.strip())


def finished(doc):
    return datetime.datetime.fromisoformat(doc["run"]["finished_at"].replace("Z", "+00:00")).timestamp()


def scraped(runs):
    """True once Prometheus's view of the newest run per label matches `runs` ({label: finish time})."""
    latest = query("ccbench:run_latest")
    got = {dict(k)["label"]: v for k, v in latest.items()}
    return all(abs(got.get(l, -1) - t) < 1 for l, t in runs.items())


try:
    wait_for("Prometheus ready", lambda: urllib.request.urlopen(f"{prom_url}/-/ready", timeout=2).status == 200)
    wait_for("Pushgateway ready", lambda: urllib.request.urlopen(f"{pgw_url}/-/ready", timeout=2).status == 200)
    docs = {}
    for name in ("p5en-nccl.json", "p6-b200-nccl.json"):
        doc = json.load(open(os.path.join(data, name)))
        docs[doc["run"]["label"]] = doc
    assert set(docs) == set(LABELS), docs.keys()
    push(os.path.join(data, "p5en-nccl.json"), os.path.join(data, "p6-b200-nccl.json"))
    wait_for("the first scrape and rule evaluation", lambda: scraped({l: finished(docs[l]) for l in LABELS}))

    dash = json.load(open(dashboard_path))
    panels = []
    for p in dash["panels"]:
        panels.append(p)
        panels.extend(p.get("panels", []))
    variables = {"label": "|".join(LABELS), "instance_type": ".*", "op": OP, "bytes": str(BYTES)}

    def expr_of(target):
        e = target["expr"]
        for k, v in variables.items():
            e = e.replace("${" + k + "}", v).replace("$" + k, v)
        return e

    def rows(doc, **where):
        return [r for r in doc["results"] if all(r[k] == v for k, v in where.items())]

    def by(keys, docs_, select, value, reduce_=max):
        """{labelset: reduce(value(row))} over the rows `select` picks, grouped by `keys`."""
        groups = {}
        for label, doc in docs_.items():
            for r in select(doc):
                labels = {"label": label, "instance_type": doc["system"].get("instance_type", ""),
                          "op": r["op"], "bytes": str(r["bytes"])}
                key = frozenset((k, labels[k]) for k in keys)
                groups.setdefault(key, []).append(value(r))
        return {k: reduce_(v) for k, v in groups.items()}

    def median(v):
        v = sorted(v)
        return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2

    def mean(v):
        return sum(v) / len(v)

    # What each panel is meant to show, computed from the result files of the newest run per label.
    def expected(title, ref_id, docs_):
        op_rows = lambda d: rows(d, op=OP)
        out_of_place = lambda d: rows(d, op=OP, in_place=False)
        at_size = lambda d: rows(d, op=OP, bytes=BYTES)
        if title.startswith("Bus bandwidth by size"):
            return by(("label", "bytes"), docs_, out_of_place, lambda r: r["busbw_gbps"])
        if title.startswith("Median latency by size"):
            return by(("label", "bytes"), docs_, out_of_place, lambda r: r["time_us"]["median"] * 1e-6)
        if title.startswith("Bus bandwidth at"):
            return by(("label", "instance_type", "op"), docs_, at_size, lambda r: r["busbw_gbps"])
        if title.startswith("Latency at"):
            q = "median" if ref_id == "A" else "p99"
            return by(("label", "op"), docs_, at_size, lambda r: r["time_us"][q] * 1e-6)
        if title == "Wrong elements (data check)":
            return {frozenset(): float(sum(r["wrong"] for d in docs_.values() for r in op_rows(d)))}
        if title == "Wrong elements by op and size":
            got = by(("label", "op", "bytes"), docs_, op_rows, lambda r: r["wrong"], sum)
            return {k: v for k, v in got.items() if v > 0}
        if title == "Sizes that reached the CI target":
            return by(("label",), docs_, op_rows, lambda r: 1.0 if r["ci_target_met"] else 0.0, mean)
        if title == "Runs":
            return None  # checked by its labels below
        raise AssertionError(f"no expectation written for panel {title!r}")

    def check_panels(docs_, when):
        checked = 0
        for p in panels:
            for t in p.get("targets", []):
                got = query(expr_of(t))
                if p["title"] == "Runs":
                    labels = sorted(dict(k)["label"] for k in got)
                    if labels != sorted(docs_):
                        problems.append(f"{when}: Runs shows {labels}, want {sorted(docs_)}")
                    for k in got:
                        m = dict(k)
                        doc = docs_[m["label"]]
                        if m.get("status") != doc["run"]["status"] or m.get("instance_type") != doc["system"].get(
                                "instance_type", ""):
                            problems.append(f"{when}: Runs series {m} does not describe its run")
                    checked += 1
                    continue
                want = expected(p["title"], t.get("refId", "A"), docs_)
                if set(got) != set(want):
                    problems.append(f"{when}: panel {p['title']!r} ({t.get('refId')}): series "
                                    f"{sorted(map(sorted, got))[:3]}... want {sorted(map(sorted, want))[:3]}... "
                                    f"({len(got)} vs {len(want)})")
                    continue
                for k, v in want.items():
                    if abs(got[k] - v) > 1e-9 + 1e-6 * abs(v):
                        problems.append(f"{when}: panel {p['title']!r}: {dict(k)} = {got[k]}, want {v}")
                if not want and p["title"] != "Wrong elements by op and size":
                    problems.append(f"{when}: panel {p['title']!r} expects no series: the check is empty")
                checked += 1
        return checked

    n = check_panels(docs, "two labels")
    # The template variables' own queries.
    for v in dash["templating"]["list"]:
        q = v.get("definition") or ""
        if not q.startswith("label_values("):
            continue
        metric, label = [s.strip() for s in expr_of({"expr": q})[len("label_values("):-1].rsplit(",", 1)]
        values = get(f"{prom_url}/api/v1/label/{label}/values?" + urllib.parse.urlencode({"match[]": metric}))["data"]
        if label == "label" and sorted(values) != sorted(LABELS):
            problems.append(f"variable {v['name']}: {values}")
        if label == "op" and OP not in values:
            problems.append(f"variable {v['name']}: {values} lacks {OP}")
        if label == "bytes" and str(BYTES) not in values:
            problems.append(f"variable {v['name']}: {values} lacks {BYTES}")
    if query('ALERTS{alertname="CcbenchBusbwDrop"}'):
        problems.append("the busbw alert fires with one run per label")

    # A planted regression: the p6 label's next run, a day later, 20% slower from 1 MiB up, with
    # wrong elements at one size.
    slow_label = LABELS[1]
    slow = copy.deepcopy(docs[slow_label])
    for field in ("started_at", "finished_at"):
        t = datetime.datetime.fromisoformat(slow["run"][field].replace("Z", "+00:00")) + datetime.timedelta(days=1)
        slow["run"][field] = t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
    slowed = set()
    for r in slow["results"]:
        if r["op"] == OP and r["bytes"] >= SLOW_FROM_BYTES:
            r["busbw_gbps"] *= SLOWDOWN
            r["algbw_gbps"] *= SLOWDOWN
            for k in ("min", "median", "mean", "p99", "max"):
                r["time_us"][k] /= SLOWDOWN
            if r["time_us"].get("ci95"):
                r["time_us"]["ci95"] = [x / SLOWDOWN for x in r["time_us"]["ci95"]]
            r["samples_us"] = [x / SLOWDOWN for x in r["samples_us"]]
            slowed.add((r["bytes"], str(r["in_place"]).lower()))
        if r["op"] == OP and r["bytes"] == WRONG_AT and r["trial"] == 0 and not r["in_place"]:
            r["wrong"] = 3
    slow_path = os.path.join(work, "p6-b200-run2.json")
    json.dump(slow, open(slow_path, "w"))
    push(slow_path)
    wait_for("the second run's scrape", lambda: scraped({LABELS[0]: finished(docs[LABELS[0]]),
                                                         slow_label: finished(slow)}))

    def firing():
        alerts = get(f"{prom_url}/api/v1/alerts")["data"]["alerts"]
        return [a["labels"] for a in alerts if a["labels"]["alertname"] == "CcbenchBusbwDrop" and a["state"] == "firing"]

    fired = wait_for("the busbw alert to fire", firing, timeout_s=30)
    time.sleep(2)  # every size's alert is evaluated in the same pass; read them once more, settled
    fired = firing()
    got = {(int(a["bytes"]), a["in_place"]) for a in fired if a["label"] == slow_label and a["op"] == OP}
    if got != slowed:
        problems.append(f"alert fired for {sorted(got)}, want the slowed sizes {sorted(slowed)}")
    if any(a["label"] != slow_label for a in fired):
        problems.append(f"alert fired for another label: {[a for a in fired if a['label'] != slow_label][:2]}")
    n += check_panels({LABELS[0]: docs[LABELS[0]], slow_label: slow}, "after the slow run")

    # A third run equal to the second: the last two runs agree, the alert resolves, and the
    # gateway keeps only the last two runs of the label.
    third = copy.deepcopy(slow)
    third["run"]["finished_at"] = (datetime.datetime.fromisoformat(slow["run"]["finished_at"].replace("Z", "+00:00")) +
                                   datetime.timedelta(hours=6)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    third_path = os.path.join(work, "p6-b200-run3.json")
    json.dump(third, open(third_path, "w"))
    push(third_path)
    wait_for("the third run's scrape", lambda: scraped({slow_label: finished(third)}))
    wait_for("the alert to resolve", lambda: not firing(), timeout_s=30)
    # Bad input to the push script: one line, its exit code, nothing pushed.
    for args, code, text in ((["--keep", "1", pgw_url, third_path], 2, "--keep: give 2 or more"),
                             ([pgw_url, os.path.join(work, "missing.json")], 2, "missing.json"),
                             ([f"http://127.0.0.1:{free_port()}", third_path], 3, "Connection refused")):
        r = subprocess.run([push_script, "--ccbench", ccbench, *args], capture_output=True, text=True)
        if r.returncode != code or text not in r.stderr or len(r.stderr.strip().splitlines()) != 1:
            problems.append(f"push-prometheus.py {args[:-1]}: exit {r.returncode}, {r.stderr.strip()!r}; "
                            f"want exit {code} and one line with {text!r}")
    runs = sorted(g["labels"]["run"] for g in get(f"{pgw_url}/api/v1/metrics")["data"]
                  if g["labels"].get("label") == slow_label)
    want_runs = sorted(str(int(finished(d))) for d in (slow, third))
    if runs != want_runs:
        problems.append(f"the gateway holds runs {runs} of {slow_label!r}, want the last two {want_runs}")
finally:
    stop()

if problems:
    print("FAILED:\n  " + "\n  ".join(problems))
    print(f"(logs in {work})")
    sys.exit(1)
shutil.rmtree(work, ignore_errors=True)
print(f"PASS: {n} panel queries matched the result files; the alert fired for the {len(slowed)} slowed sizes "
      f"of {slow_label!r} only and resolved after an equal run; the gateway kept the last 2 runs")
