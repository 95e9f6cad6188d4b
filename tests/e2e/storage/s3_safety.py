#!/usr/bin/python3
"""Issue 27 items 2, 3 and 7 against a real S3 server (OpenStack Swift with s3api, started here by
scripts/emulate/s3.sh with its own state directory and ports; docs/checkpoint.md, "S3 engine"):

  - prefixes with '.', '..' or an empty segment are refused (exit 2 naming --target or
    --export-to) before any request: a committed step under real/ keeps its objects (same keys,
    ETags and times) after `--target s3://ckpt/x/../real`, and bucket 'victim' stays empty after
    `--target s3://ckpt/../victim/data`;
  - two 2-rank runs started at once into one prefix (2 trials each, write and read back): both
    exit 0, both read back verified, their steps are disjoint, and every committed step's manifest
    lists shards that exist with their sizes; no multipart upload is left;
  - one of the two has user:password in AWS_ENDPOINT_URL: it works (the userinfo is not sent:
    requests are signed) and the password is in no output and not in the result file.
Exit 77 (skipped) without root or Swift.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3_checkpoint import CCBENCH, MPIRUN, S3SH, fail, free_port_block, rows, skip  # noqa: E402

PASSWORD = "hunter2pw"


def aws(env, *args):
    r = subprocess.run([S3SH, "aws"] + list(args), env=env, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail(f"aws {' '.join(args)}: {r.returncode}: {r.stderr}")
    return json.loads(r.stdout) if r.stdout.strip() else {}


def objects(env, bucket, prefix=""):
    """{key: (size, etag, last modified)} under prefix."""
    args = ["s3api", "list-objects-v2", "--bucket", bucket] + (["--prefix", prefix] if prefix else [])
    return {o["Key"]: (o["Size"], o["ETag"], o["LastModified"]) for o in aws(env, *args).get("Contents", [])}


def ckpt(env, args, np=1, timeout=120):
    return subprocess.run(MPIRUN + ["-np", str(np), CCBENCH, "checkpoint"] + args, env=env, capture_output=True,
                          text=True, timeout=timeout)


def first_line(p):
    return p.stderr.splitlines()[0] if p.stderr else ""


def dot_segments(env, work):
    r = ckpt(env, ["--target", "s3://ckpt/real", "--shard-bytes", "4M", "--phases", "write", "--keep", "1", "-T", "60"])
    if r.returncode != 0:
        fail(f"writing real/: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    aws(env, "s3api", "create-bucket", "--bucket", "victim")
    before = objects(env, "ckpt")
    if not any(k.startswith("real/step-") and k.endswith("/ccbench-manifest.json") for k in before):
        fail(f"no committed step under real/: {sorted(before)}")
    posix = os.path.join(work, "posix")
    os.makedirs(posix)
    cases = [
        (["--target", "s3://ckpt/x/../real"], "--target s3://ckpt/x/../real: the prefix has a '..' segment"),
        (["--target", "s3://ckpt/../victim/data"], "--target s3://ckpt/../victim/data: the prefix has a '..' segment"),
        (["--target", "s3://ckpt/real/./"], "--target s3://ckpt/real/./: the prefix has a '.' segment"),
        (["--target", "s3://ckpt//real"], "--target s3://ckpt//real: the prefix has an empty segment"),
        (["--target", posix, "--export-to", "s3://ckpt/x/../real"],
         "--export-to s3://ckpt/x/../real: the prefix has a '..' segment"),
    ]
    for args, expect in cases:
        r = ckpt(env, args + ["--shard-bytes", "4M", "--phases", "write", "-T", "60"])
        if r.returncode != 2 or not first_line(r).startswith("ccbench checkpoint: " + expect):
            fail(f"{args}: exit {r.returncode}: {first_line(r)!r}")
        print(f"# {' '.join(args)}: exit 2: {first_line(r)}")
    if objects(env, "ckpt") != before:
        fail("objects in bucket ckpt changed after the refused prefixes")
    victim = objects(env, "victim")
    if victim:
        fail(f"bucket victim: {victim}")
    if os.listdir(posix):
        fail(f"the POSIX target was written: {os.listdir(posix)}")


def concurrent_runs(env, work):
    secret_env = dict(env, AWS_ENDPOINT_URL=env["AWS_ENDPOINT_URL"].replace("://", f"://user:{PASSWORD}@", 1))
    outs = [os.path.join(work, f"run{i}.json") for i in (0, 1)]
    args = ["--target", "s3://ckpt/shared", "--shard-bytes", "6M", "--part-size", "5M", "--trials", "2", "--keep", "2",
            "-T", "90"]
    t = time.monotonic()
    procs = [subprocess.Popen(MPIRUN + ["-np", "2", CCBENCH, "checkpoint"] + args + ["-J", out], env=e,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for out, e in zip(outs, (secret_env, env))]
    results = [p.communicate(timeout=240) for p in procs]
    print(f"# two concurrent 2-rank runs: exits {[p.returncode for p in procs]} in {time.monotonic() - t:.1f} s")
    steps = []
    for p, (out, err), path in zip(procs, results, outs):
        if p.returncode != 0:
            fail(f"concurrent run {path}: exit {p.returncode}\n{out}\n{err}")
        doc = rows(path)
        reads = [x for x in doc["results"] if x["op"] == "checkpoint_read"]
        if len(reads) != 2 or any(x.get("wrong", 0) != 0 for x in reads):
            fail(f"{path}: reads {[(x['checkpoint']['step'], x.get('wrong')) for x in reads]}")
        steps.append({x["checkpoint"]["step"] for x in doc["results"] if x["op"] == "checkpoint_write"})
    if len(steps[0]) != 2 or len(steps[1]) != 2 or steps[0] & steps[1]:
        fail(f"the runs' steps: {steps}")
    with open(outs[0]) as f:
        everything = f.read() + results[0][0] + results[0][1]
    if PASSWORD in everything:
        fail("the endpoint's password is in the output or the result file")
    found = objects(env, "ckpt", "shared/")
    manifests = sorted(k for k in found if k.endswith("/ccbench-manifest.json"))
    committed = {k.split("/")[1] for k in manifests}
    if committed != steps[0] | steps[1]:
        fail(f"committed steps {sorted(committed)}, the runs wrote {steps}")
    # Every manifest in one copy (the AWS CLI takes seconds to start on this machine).
    local = os.path.join(work, "manifests")
    r = subprocess.run([S3SH, "aws", "s3", "cp", "s3://ckpt/shared/", local, "--recursive", "--exclude", "*",
                        "--include", "*/ccbench-manifest.json"], env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"aws s3 cp the manifests: {r.stderr}")
    for key in manifests:
        step = key.split("/")[1]
        with open(os.path.join(local, step, "ccbench-manifest.json")) as f:
            manifest = json.load(f)
        for shard in manifest["shards"]:
            shard_key = f"shared/{step}/rank-{shard['writer']:05d}.shard"
            if shard_key not in found or found[shard_key][0] != shard["bytes"]:
                fail(f"{key} lists {shard_key} ({shard['bytes']} bytes): {found.get(shard_key)}")
    unique = all(re.fullmatch(r"step-\d{6}-[0-9a-f]{16}", s) for s in committed)
    print(f"# {len(manifests)} committed steps, each manifest's shards there; step names "
          f"{'run-unique (the server does not check If-None-Match)' if unique else 'claimed with If-None-Match'}: "
          f"{sorted(committed)}")
    uploads = aws(env, "s3api", "list-multipart-uploads", "--bucket", "ckpt")
    if uploads.get("Uploads"):
        fail(f"multipart uploads left: {uploads['Uploads']}")


def own_steps_removed(env, work):
    """A run removes only its own steps (issue 27 item 18 on S3): --keep 1 keeps its newest one, no
    --keep removes all of them; the two concurrent runs' steps under the same prefix stay as they were."""
    others = objects(env, "ckpt", "shared/")
    out = os.path.join(work, "keep1.json")
    r = ckpt(env, ["--target", "s3://ckpt/shared", "--shard-bytes", "4M", "--trials", "3", "--keep", "1", "-J", out,
                   "-T", "60"])
    if r.returncode != 0:
        fail(f"--keep 1: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    written = [x["checkpoint"]["step"] for x in rows(out)["results"] if x["op"] == "checkpoint_write"]
    after = objects(env, "ckpt", "shared/")
    mine = {k for k in after if k not in others}
    if {k: after[k] for k in others if k in after} != others or len(written) != 3:
        fail(f"--keep 1: the other runs' objects changed, or rows {written}")
    if {k.split("/")[1] for k in mine} != {written[-1]}:
        fail(f"--keep 1: this run's objects left {sorted(mine)}, its newest step is {written[-1]}")
    if "# removed " not in r.stdout or "(--keep)" not in r.stdout:
        fail(f"--keep 1: no removal said:\n{r.stdout}")
    kept = written[-1]
    before = objects(env, "ckpt", "shared/")
    out = os.path.join(work, "nokeep.json")
    r = ckpt(env, ["--target", "s3://ckpt/shared", "--shard-bytes", "4M", "--trials", "2", "-J", out, "-T", "60"])
    if r.returncode != 0:
        fail(f"no --keep: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    written = [x["checkpoint"]["step"] for x in rows(out)["results"] if x["op"] == "checkpoint_write"]
    if objects(env, "ckpt", "shared/") != before:
        fail(f"no --keep: the prefix changed: {sorted(set(objects(env, 'ckpt', 'shared/')) ^ set(before))}")
    if len(written) != 2 or "this run's steps; --keep N keeps the newest N" not in r.stdout:
        fail(f"no --keep: rows {written}, output:\n{r.stdout}")
    print(f"# --keep 1 kept {kept} of 3; no --keep removed its 2 steps; "
          f"{len(others)} objects of the other runs untouched")


def main():
    if os.geteuid() != 0:
        skip("needs root (scripts/emulate/s3.sh writes /etc/swift/swift.conf once)")
    if not shutil.which("swift-proxy-server") or not shutil.which("memcached"):
        skip("OpenStack Swift or memcached not installed (scripts/packages-test.txt)")
    work = tempfile.mkdtemp(prefix="ccb-s3-safety.")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(CCB_S3_STATE=f"/run/ccbench-s3-safety-{os.getpid()}", CCB_S3_PORT=str(free_port_block()),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    try:
        t0 = time.monotonic()
        up = subprocess.run([S3SH, "up", "--bucket", "ckpt"], env=env, capture_output=True, text=True, timeout=120)
        if up.returncode != 0:
            fail(f"s3.sh up: {up.returncode}: {up.stderr}")
        for line in up.stdout.splitlines():
            for kv in line.removeprefix("export ").split():
                k, v = kv.split("=", 1)
                env[k] = v
        print(f"# server up in {time.monotonic() - t0:.1f} s at {env['AWS_ENDPOINT_URL']}")
        dot_segments(env, work)
        concurrent_runs(env, work)
        own_steps_removed(env, work)
    finally:
        subprocess.run([S3SH, "down"], env=env, capture_output=True, text=True, timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    left = subprocess.run(["pgrep", "-f", env["CCB_S3_STATE"]], capture_output=True, text=True).stdout.strip()
    if left:
        fail(f"processes of the server left after down: {left}")
    print("PASS")


if __name__ == "__main__":
    main()
