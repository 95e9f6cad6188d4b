#!/usr/bin/python3
"""A real browser renders the HTML report: headless Chromium takes a screenshot and dumps the DOM.

Checks: every op has its busbw and latency charts (inline <svg> with polylines and CI bands), the
verdict of the overlaid comparison is there, nothing is fetched from the network, and the browser
logs no console message (the page has no script, so any console line is an error). A negative
control first proves the console check catches an error.

Usage: test_html_chromium.py CCBENCH DATA_DIR [--screenshot-out PATH]   (PATH: e.g. docs/report-example.png)
"""
import html.parser
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import args, run, sample_files, skip, workdir  # noqa: E402

ccbench, data = args()
screenshot_out = sys.argv[sys.argv.index("--screenshot-out") + 1] if "--screenshot-out" in sys.argv else None
browser = shutil.which("chromium") or shutil.which("chromium-browser")
if not browser:
    skip("chromium not found (Debian package chromium)")
tmp = workdir()
WIDTH, HEIGHT = 1300, 1500


def chromium(url, *extra):
    profile = os.path.join(tmp, f"profile-{len(os.listdir(tmp))}")  # a fresh profile per launch
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage", "--hide-scrollbars", f"--user-data-dir={profile}",
           "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0",
           f"--window-size={WIDTH},{HEIGHT}", *extra, url]
    r = run(cmd, timeout=120, cwd=tmp)
    return r


def console_lines(stderr):
    bad = []
    for line in stderr.splitlines():
        if ":CONSOLE" in line or "Uncaught" in line or "net::ERR" in line:
            bad.append(line)
    return bad


# Negative control: a page with a script error must be caught.
control = os.path.join(tmp, "control.html")
open(control, "w").write("<html><body><script>console.error('boom'); notDefined();</script></body></html>")
r = chromium("file://" + control, "--dump-dom")
if not any("Uncaught" in line for line in console_lines(r.stderr)):
    print(r.stderr[-2000:])
    sys.exit("FAILED: the console check missed a deliberate script error; it would miss real ones too")
print("  negative control caught:", console_lines(r.stderr)[-1][-100:])

base, cand, local = sample_files(data)
page = os.path.join(tmp, "report.html")
# Relative names from the data folder: the page (and docs/report-example.png made from it) shows
# the paths it was given, not the machine's folders.
r = run([ccbench, "report", "--baseline", os.path.basename(base), os.path.basename(cand), "--format", "html", "--out",
         page], cwd=data)
if r.returncode == 0 and os.path.dirname(os.path.abspath(data)) in open(page).read():
    sys.exit(f"FAILED: the page shows an absolute path under {os.path.dirname(os.path.abspath(data))}")
if r.returncode != 0:
    sys.exit(f"report failed: {r.stderr}")
page_all = os.path.join(tmp, "all.html")
r = run([ccbench, "report", base, cand, local, "--out", page_all])
if r.returncode != 0:
    sys.exit(f"report failed: {r.stderr}")

problems = []
for path, with_verdict in ((page, True), (page_all, False)):
    source = open(path).read()
    for needle in ("<script", "http://www.w3.org/1999", "https://", "@import", "url("):
        if needle in source and needle != "http://www.w3.org/1999":
            problems.append(f"{path}: contains {needle!r} (must be self-contained)")

    r = chromium("file://" + path, "--dump-dom")
    if r.returncode != 0:
        problems.append(f"chromium --dump-dom exit {r.returncode}: {r.stderr[-500:]}")
        continue
    errors = console_lines(r.stderr)
    if errors:
        problems.append(f"{path}: console output: {errors[:5]}")

    class Counter(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.classes, self.ids, self.text = {}, {}, set(), []

        def handle_starttag(self, tag, attrs):
            self.tags[tag] = self.tags.get(tag, 0) + 1
            a = dict(attrs)
            for c in (a.get("class") or "").split():
                self.classes[c] = self.classes.get(c, 0) + 1
            if a.get("id"):
                self.ids.add(a["id"])

        def handle_data(self, d):
            self.text.append(d)

    dom = Counter()
    dom.feed(r.stdout)
    ops = {"allreduce", "allgather", "alltoall"}
    charts = 2 * len(ops) + (1 if with_verdict else 0)
    print(f"  {os.path.basename(path)}: {dom.tags.get('svg', 0)} svg, {dom.tags.get('polyline', 0)} polylines, "
          f"{dom.classes.get('band', 0)} CI bands, {dom.tags.get('circle', 0)} markers")
    if dom.tags.get("svg", 0) != charts:
        problems.append(f"{path}: {dom.tags.get('svg', 0)} <svg>, want {charts}")
    runs = 2 if with_verdict else 3
    if dom.tags.get("polyline", 0) < 2 * len(ops) * runs:
        problems.append(f"{path}: {dom.tags.get('polyline', 0)} polylines, want >= {2 * len(ops) * runs}")
    if dom.classes.get("band", 0) < 2 * len(ops) * runs:
        problems.append(f"{path}: {dom.classes.get('band', 0)} CI bands")
    for op in ops:
        if f"op-{op}" not in dom.ids:
            problems.append(f"{path}: no section for {op}")
    if "metadata" not in dom.ids:
        problems.append(f"{path}: no metadata section")
    if with_verdict and ("verdict" not in dom.ids or dom.classes.get("badge", 0) != 1):
        problems.append(f"{path}: no verdict")
    text = " ".join(dom.text)
    for needle in ("p5en.48xlarge", "p6-b200.48xlarge", "busbw (GB/s)", "time (µs)"):
        if needle not in text:
            problems.append(f"{path}: text lacks {needle!r}")

# The screenshot: a PNG of the window's size with the charts' colours in it.
shot = os.path.join(tmp, "report.png")
r = chromium("file://" + page, f"--screenshot={shot}")
if r.returncode != 0 or not os.path.exists(shot):
    problems.append(f"no screenshot (exit {r.returncode}): {r.stderr[-500:]}")
else:
    size = os.path.getsize(shot)
    with open(shot, "rb") as f:
        head = f.read(24)
    w, h = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    print(f"  screenshot {shot}: {w}x{h}, {size} bytes")
    if head[:8] != b"\x89PNG\r\n\x1a\n" or (w, h) != (WIDTH, HEIGHT):
        problems.append(f"screenshot is not a {WIDTH}x{HEIGHT} PNG")
    if size < 30000:
        problems.append(f"screenshot is {size} bytes: a blank page?")
    try:
        from PIL import Image  # Debian python3-pil; without it the size check above stands alone

        img = Image.open(shot).convert("RGB")
        pixels = list(img.getdata())
        blue = sum(1 for p in pixels if abs(p[0] - 0x00) < 40 and abs(p[1] - 0x72) < 40 and abs(p[2] - 0xB2) < 40)
        orange = sum(1 for p in pixels if abs(p[0] - 0xD5) < 40 and abs(p[1] - 0x5E) < 40 and abs(p[2] - 0x00) < 40)
        print(f"  series colours on screen: {blue} blue px, {orange} orange px")
        if blue < 200 or orange < 200:
            problems.append("the series' lines are not visible in the screenshot")
    except ImportError:
        print("  (PIL not installed: pixel check skipped)")
    if screenshot_out:
        shutil.copyfile(shot, screenshot_out)
        print(f"  copied to {screenshot_out}")

if problems:
    print("FAILED:\n  " + "\n  ".join(problems))
    sys.exit(1)
print("PASS")
