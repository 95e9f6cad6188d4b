#!/usr/bin/python3
"""The S3 engine behind a shaped link (a measurement, not a CI test: with the commit's fixed cost on
a loaded 2-core machine it is not decisive in a test's time; docs/checkpoint.md, "Behind a shaped
link"). `ccbench checkpoint --target s3://` against a real S3 server
(OpenStack Swift + s3api, scripts/emulate/s3.sh --host) in emulated host 1, the writing rank in
emulated host 0 (scripts/emulate/fabric.sh), so that the shaped data link (tbf) sets the upload
rate (docs/checkpoint.md, "Behind a shaped link").

  - launches alternate between two link rates (LOW, then 2 x LOW; `fabric.sh set-rate` between
    launches), one write trial each, so that the machine's drift cannot pose as the ratio;
  - prints every trial's throughput as a fraction of its link rate, and the band per rate;
  - prints `ccbench compare`'s verdicts on the claim configs/claims/emulated-s3-link-2x.yaml
    ("2x, +-15%") and the same claim at 1.5x and at 2.6x.
usage: sudo benchmarks/checkpoint_s3_link.py [PAIRS [SHARD [LOW_MBIT]]]   (defaults 5 16M 16)
Exit: compare's exit code on the 2x claim (0 confirmed, 1 refuted, 4 inconclusive); 1 when a step
fails; 77 without root, tc, ip netns or Swift. Prefix, subnets and state are the test's own
(CCB_EMU_* and CCB_S3_* from the environment win, so it can run beside another fabric).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FABRIC = os.path.join(ROOT, "scripts", "emulate", "fabric.sh")
S3SH = os.path.join(ROOT, "scripts", "emulate", "s3.sh")
CLAIM = os.path.join(ROOT, "configs", "claims", "emulated-s3-link-2x.yaml")
CCBENCH = os.path.abspath(os.environ.get("CCBENCH", os.path.join(ROOT, "build", "ccbench")))

# Why these values (docs/checkpoint.md, "Behind a shaped link"): at 16 and 32 Mbit/s Swift's proxy
# is far from its limit on a loaded 2-core machine (at 100 Mbit/s it, not the link, limits); one
# part per shard keeps Swift's per-request and CompleteMultipartUpload work smallest.
PAIRS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
SHARD = sys.argv[2] if len(sys.argv) > 2 else "16M"
LOW_MBIT = int(sys.argv[3]) if len(sys.argv) > 3 else 16
PART = os.environ.get("CCB_S3_LINK_PART", SHARD)  # one part per shard
CONCURRENCY = os.environ.get("CCB_S3_LINK_CONCURRENCY", "1")


def skip(why):
    print("SKIP:", why)
    sys.exit(77)


def fail(why):
    print("FAIL:", why)
    sys.exit(1)


def run(cmd, env, timeout=120):
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def write_trial(env, rate_mbit, index, out_dir):
    """One launch: 1 rank in host 0 writes one checkpoint to the server in host 1."""
    r = run([FABRIC, "set-rate", f"{rate_mbit}mbit"], env, timeout=30)
    if r.returncode != 0:
        fail(f"fabric.sh set-rate {rate_mbit}mbit: exit {r.returncode}: {r.stderr}")
    out = os.path.join(out_dir, f"launch-{index:03d}.json")
    p = env["CCB_EMU_PREFIX"]
    cmd = [FABRIC, "exec", "--", "mpirun", "-np", "1", "--host", f"{p}-h0:1", "-x", "AWS_ENDPOINT_URL", "-x",
           "AWS_ACCESS_KEY_ID", "-x", "AWS_SECRET_ACCESS_KEY", "-x", "AWS_REGION", CCBENCH, "checkpoint",
           "--target", f"s3://ckpt/r{rate_mbit}-{index}", "--phases", "write", "--shard-bytes", SHARD,
           "--part-size", PART, "--concurrency", CONCURRENCY, "--trials", "1", "-J", out, "-T", "60"]
    r = run(cmd, env, timeout=90)
    if r.returncode != 0:
        fail(f"{rate_mbit}mbit launch {index}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    with open(out) as f:
        doc = json.load(f)
    row = [x for x in doc["results"] if x["op"] == "checkpoint_write"][0]
    gbps = row["busbw_gbps"]
    eff = gbps * 1e9 * 8 / (rate_mbit * 1e6)
    ck = row["checkpoint"]
    print(f"# {rate_mbit:3d}mbit launch {index}: {gbps * 1e3:.3f} MB/s, {eff:.3f} of the link "
          f"(durable {ck['time_to_durable_s']:.2f} s, commit {ck['commit_s']:.3f} s, retries {row['retries']})")
    return eff


def compare(env, base, cand, claim):
    r = run([CCBENCH, "compare", base, cand, "--claim", claim], env, timeout=60)
    verdict = [ln for ln in r.stdout.splitlines() if ln.startswith("verdict")]
    return r.returncode, (verdict[0] if verdict else ""), r.stdout + r.stderr


def main():
    if os.geteuid() != 0:
        skip("needs root (network namespaces, tc, /etc/swift)")
    for tool in ("ip", "tc", "swift-proxy-server", "memcached", "mpirun"):
        if not shutil.which(tool):
            skip(f"{tool} not installed (scripts/packages-test.txt)")
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("AWS_"):
            del env[k]
    env.setdefault("CCB_EMU_PREFIX", "cs3l")
    env.setdefault("CCB_EMU_SUBNET", "10.219.0")
    env.setdefault("CCB_EMU_MGMT_SUBNET", "10.219.1")
    env.setdefault("CCB_EMU_STATE", f"/run/ccbench-emulate-{env['CCB_EMU_PREFIX']}")
    env.setdefault("CCB_S3_STATE", f"/run/ccbench-s3-link-{os.getpid()}")
    env.setdefault("CCB_S3_PORT", "8580")
    prefix = env["CCB_EMU_PREFIX"]
    work = tempfile.mkdtemp(prefix="ccb-s3-link.")
    t0 = time.monotonic()
    try:
        r = run([FABRIC, "up", "--hosts", "2", "--rate", f"{LOW_MBIT}mbit"], env, timeout=60)
        if r.returncode != 0:
            if "namespace" in r.stderr or "not supported" in r.stderr:
                skip(f"fabric.sh up: {r.stderr.strip()}")
            fail(f"fabric.sh up: exit {r.returncode}: {r.stderr}")
        r = run([S3SH, "up", "--bucket", "ckpt", "--host", f"{prefix}-h1"], env, timeout=120)
        if r.returncode != 0:
            fail(f"s3.sh up --host {prefix}-h1: exit {r.returncode}: {r.stderr}")
        for line in r.stdout.splitlines():
            for kv in line.removeprefix("export ").split():
                k, v = kv.split("=", 1)
                env[k] = v
        print(f"# fabric and server up in {time.monotonic() - t0:.1f} s at {env['AWS_ENDPOINT_URL']}")
        dirs = {m: os.path.join(work, f"{m}mbit") for m in (LOW_MBIT, 2 * LOW_MBIT)}
        for d in dirs.values():
            os.makedirs(d)
        effs = {m: [] for m in dirs}
        for i in range(1, PAIRS + 1):
            # Alternate which rate goes first, so neither always follows the other.
            order = (LOW_MBIT, 2 * LOW_MBIT) if i % 2 else (2 * LOW_MBIT, LOW_MBIT)
            for m in order:
                effs[m].append(write_trial(env, m, i, dirs[m]))
        for m, e in effs.items():
            print(f"{m}mbit: throughput / link {min(e):.3f}-{max(e):.3f} over {len(e)} launches")
        base, cand = dirs[LOW_MBIT], dirs[2 * LOW_MBIT]
        rc2x, verdict, out = compare(env, base, cand, CLAIM)
        print(out)
        print(f"claim 2x: {verdict}")
        with open(CLAIM) as f:
            claim = f.read()
        for speedup, name in (("50%", "1.5x"), ("160%", "2.6x")):
            off = os.path.join(work, f"claim-{name}.yaml")
            with open(off, "w") as f:
                f.write("\n".join(f"expected_speedup: {speedup}" if ln.startswith("expected_speedup:") else ln
                                  for ln in claim.splitlines()) + "\n")
            rc, verdict, out = compare(env, base, cand, off)
            print(f"claim {name}: {verdict}")
    finally:
        run([S3SH, "down"], env, timeout=60)
        run([FABRIC, "down"], env, timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    left = run(["pgrep", "-f", env["CCB_S3_STATE"]], env).stdout.strip()
    if left:
        fail(f"processes of the server left after down: {left}")
    ns = [n for n in run(["ip", "netns", "list"], env).stdout.split() if n.startswith(prefix + "-")]
    if ns:
        fail(f"namespaces left after fabric.sh down: {ns}")
    print(f"done in {time.monotonic() - t0:.1f} s")
    sys.exit(rc2x)


if __name__ == "__main__":
    main()
