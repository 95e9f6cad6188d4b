#!/usr/bin/python3
"""Bad inputs to `ccbench report` exit 2 with a message naming the file or the flag."""
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import args, run, sample_files, workdir  # noqa: E402

ccbench, data = args()
good = sample_files(data)[2]
tmp = workdir()
failures = []


def expect(cmd, code, *needles):
    r = run([ccbench, "report", *cmd])
    text = r.stdout + r.stderr
    if r.returncode != code or not all(n in text for n in needles):
        failures.append(f"{cmd}: exit {r.returncode} (want {code}), output {text.strip()[:300]!r}, want {needles}")
    else:
        print(f"  ok: exit {code}: {r.stderr.strip()[:160]}")


missing = os.path.join(tmp, "nope.json")
expect([missing], 2, missing)

truncated = os.path.join(tmp, "truncated.json")
with open(good) as f:
    open(truncated, "w").write(f.read()[:5000])
expect([truncated], 2, truncated, "malformed JSON")

bad_field = os.path.join(tmp, "bad-field.json")
text = open(good).read().replace('"median":', '"median": "fast", "x":', 1)
open(bad_field, "w").write(text)
expect([bad_field], 2, bad_field, "/results/0/time_us/median")

expect([good, "--format", "pdf"], 2, "--format", "pdf")
expect([good, "--out", "/nonexistent-ccbench-report/dir/r.html"], 2, "--out")  # missing folders: not under /
expect([good, "--out", tmp], 2, "--out")
if os.geteuid() != 0:  # root writes anywhere; a read-only folder only stops others
    ro = os.path.join(tmp, "ro")
    os.mkdir(ro)
    os.chmod(ro, stat.S_IRUSR | stat.S_IXUSR)
    expect([good, "--out", os.path.join(ro, "r.csv")], 2, "--out")
expect([], 2, "files")
expect([good, "--no-such-flag"], 2, "--no-such-flag")
expect([good, "--claim", good], 2, "--claim")
expect([good, "--baseline", missing], 2, missing)
empty_dir = os.path.join(tmp, "empty")
os.mkdir(empty_dir)
expect([empty_dir], 2, empty_dir)

# And the good cases exit 0: stdout by default, a file with --out, a folder as input.
expect([good], 0, "allreduce")
out = os.path.join(tmp, "r.md")
expect([good, "--out", out], 0, out)
if not open(out).read().startswith("## ccbench report"):
    failures.append("--out r.md did not infer markdown")
expect([data, "--format", "csv"], 0, "p5en EFAv3", "local-mpi.json")
expect(["--help"], 0, "--baseline")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("PASS")
