#!/usr/bin/python3
"""`ccbench checkpoint --target s3://` against a real S3 server: OpenStack Swift with its s3api
middleware (SigV4 signatures and payload hashes checked), started here by scripts/emulate/s3.sh
with its own state directory and ports, torn down at the end (docs/checkpoint.md, "S3 engine").

  - 2 ranks through mpirun write and read back (verified) two steps; the objects are where the
    manifest says, with their sizes; the secret key appears in no output and not in the result file;
  - --phases read alone reads the newest of those steps back (verified; the manifest read through
    the engine), and every row's backend is s3;
  - a wrong secret key: exit 2 naming the credential problem (AWS_SECRET_ACCESS_KEY,
    SignatureDoesNotMatch), the wrong secret in no output;
  - a bucket that does not exist: exit 2 naming it;
  - --part-size below S3's 5 MiB: exit 2 naming --part-size, before any request;
  - --export-to for a POSIX target, with an exporter (dra_exporter.py) copying each committed step
    to the bucket DELAY s after it sees it: the reported export lag is DELAY plus the exporter's copy
    time, within the band below; without an exporter, "export NOT finished" at the deadline;
  - the server killed mid-run: the trial fails (exit 2) well before -T, the finished trials are in
    the result file, and the abandoned upload is reported (its id, not aborted: nothing answers).
Exit 77 (skipped) without root or Swift.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
S3SH = os.path.join(ROOT, "scripts", "emulate", "s3.sh")
CCBENCH = os.environ.get("CCBENCH", os.path.join(ROOT, "build", "ccbench"))
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]


def skip(why):
    print("SKIP:", why)
    sys.exit(77)


def fail(why):
    print("FAIL:", why)
    sys.exit(1)


def free_port_block(n=5):
    """A base port with the next n-1 free as well (the proxy and its four servers)."""
    for base in range(20000 + (os.getpid() % 2000) * 5, 40000, 5):
        ok = True
        for p in range(base, base + n):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return base
    fail("no free ports")


def main():
    if os.geteuid() != 0:
        skip("needs root (scripts/emulate/s3.sh writes /etc/swift/swift.conf once)")
    if not shutil.which("swift-proxy-server") or not shutil.which("memcached"):
        skip("OpenStack Swift or memcached not installed (scripts/packages-test.txt)")
    work = tempfile.mkdtemp(prefix="ccb-s3-e2e.")
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("AWS_"):
            del env[k]
    env.update(CCB_S3_STATE=f"/run/ccbench-s3-e2e-{os.getpid()}", CCB_S3_PORT=str(free_port_block()),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
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
        secret = env["AWS_SECRET_ACCESS_KEY"]
        run_checks(env, work, secret)
    finally:
        subprocess.run([S3SH, "down"], env=env, capture_output=True, text=True, timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    left = subprocess.run(["pgrep", "-f", env["CCB_S3_STATE"]], capture_output=True, text=True).stdout.strip()
    if left:
        fail(f"processes of the server left after down: {left}")
    print("PASS")


def ckpt(env, args, np=2, timeout=120):
    return subprocess.run(MPIRUN + ["-np", str(np), CCBENCH, "checkpoint"] + args, env=env, capture_output=True,
                          text=True, timeout=timeout)


def rows(path):
    out = []
    with open(path) as f:
        doc = f.read()
    try:
        return json.loads(doc)
    except json.JSONDecodeError:
        for line in doc.splitlines():
            if line.strip():
                out.append(json.loads(line))
        return out


def aws(env, *args):
    r = subprocess.run([S3SH, "aws"] + list(args), env=env, capture_output=True, text=True, timeout=60)
    return r


def run_checks(env, work, secret):
    # 1. 2 ranks, write + read, verified; the objects and their sizes.
    out = os.path.join(work, "ok.json")
    t = time.monotonic()
    r = ckpt(env, ["--target", "s3://ckpt/e2e", "--shard-bytes", "12M", "--part-size", "5M", "--concurrency", "2",
                   "--trials", "2", "--keep", "2", "-J", out, "-T", "60"])
    print(f"# 2-rank write+read: exit {r.returncode} in {time.monotonic() - t:.1f} s")
    if r.returncode != 0:
        fail(f"2-rank run: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    doc = rows(out)
    results = doc["results"] if isinstance(doc, dict) else [x for x in doc if "op" in x]
    ops = [x["op"] for x in results]
    if ops.count("checkpoint_write") != 2 or ops.count("checkpoint_read") != 2:
        fail(f"rows: {ops}")
    for x in results:
        if x["op"] == "checkpoint_read" and x.get("wrong", 0) != 0:
            fail(f"read back wrong: {x}")
        if x["op"] in ("checkpoint_write", "checkpoint_read") and x.get("retries") != 0:
            fail(f"retries on an idle server: {x.get('retries')}")
    heads = {}
    # The steps' names as the rows say (a server that does not check If-None-Match, as this Swift,
    # gets run-unique names step-NNNNNN-<run>: docs/checkpoint.md, "S3 engine").
    steps = sorted({x["checkpoint"]["step"] for x in results if x["op"] == "checkpoint_write"})
    if len(steps) != 2 or not all(s.startswith(("step-000001", "step-000002")) for s in steps):
        fail(f"steps: {steps}")
    for step in steps:
        for shard in ("rank-00000.shard", "rank-00001.shard"):
            h = aws(env, "s3api", "head-object", "--bucket", "ckpt", "--key", f"e2e/{step}/{shard}")
            if h.returncode != 0:
                fail(f"head-object e2e/{step}/{shard}: {h.stderr}")
            heads[(step, shard)] = json.loads(h.stdout)
            if heads[(step, shard)]["ContentLength"] != 12 << 20:
                fail(f"{step}/{shard}: {heads[(step, shard)]['ContentLength']} bytes")
            if not heads[(step, shard)]["ETag"].strip('"').endswith("-3"):
                fail(f"{step}/{shard}: ETag {heads[(step, shard)]['ETag']} (3 parts of 5M, 5M, 2M expected)")
        if aws(env, "s3api", "head-object", "--bucket", "ckpt", "--key", f"e2e/{step}/ccbench-manifest.json").returncode:
            fail(f"{step}: no manifest (the commit)")
    config = doc["config"] if isinstance(doc, dict) else doc[0]["config"]
    if {x["backend"] for x in results} != {"s3"} or config["backend"] != "s3":
        fail(f"backend: rows {sorted({x['backend'] for x in results})}, config {config['backend']}")

    # 1b. --phases read: the newest committed step read back through the engine (its manifest read
    # from the bucket), verified, as a restart reads it; nothing written or removed.
    before = aws(env, "s3api", "list-objects-v2", "--bucket", "ckpt", "--prefix", "e2e/").stdout
    read_out = os.path.join(work, "read.json")
    r = ckpt(env, ["--target", "s3://ckpt/e2e", "--shard-bytes", "12M", "--part-size", "5M", "--concurrency", "2",
                   "--phases", "read", "-J", read_out, "-T", "60"])
    if r.returncode != 0:
        fail(f"--phases read: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    read_doc = rows(read_out)
    reads = [x for x in (read_doc["results"] if isinstance(read_doc, dict) else read_doc)
             if x.get("op") == "checkpoint_read"]
    if len(reads) != 1 or reads[0]["wrong"] != 0 or reads[0]["checkpoint"]["step"] != steps[-1] or \
            reads[0]["cache_drop"] != "remote" or reads[0]["backend"] != "s3":
        fail(f"--phases read: rows {reads}")
    if aws(env, "s3api", "list-objects-v2", "--bucket", "ckpt", "--prefix", "e2e/").stdout != before:
        fail("--phases read changed the prefix")
    print(f"# --phases read: {steps[-1]} read back, verified")

    uploads = aws(env, "s3api", "list-multipart-uploads", "--bucket", "ckpt")
    if uploads.stdout.strip() and json.loads(uploads.stdout).get("Uploads"):
        fail(f"multipart uploads left: {uploads.stdout}")
    with open(out) as f:
        if secret in f.read() or secret in r.stdout or secret in r.stderr:
            fail("the secret key is in the output or the result file")

    # 2. A wrong secret key: exit 2 naming the credential problem; the wrong secret nowhere.
    bad = dict(env, AWS_SECRET_ACCESS_KEY="wrongSECRET" + secret[::-1])
    bad_out = os.path.join(work, "bad.json")
    r = ckpt(bad, ["--target", "s3://ckpt/e2e", "--shard-bytes", "8M", "-J", bad_out, "-T", "60"])
    if r.returncode != 2:
        fail(f"wrong secret: exit {r.returncode}\n{r.stderr}")
    first = r.stderr.splitlines()[0] if r.stderr else ""
    if "AWS_SECRET_ACCESS_KEY" not in first or "SignatureDoesNotMatch" not in first:
        fail(f"wrong secret: {first!r}")
    everything = r.stdout + r.stderr + (open(bad_out).read() if os.path.exists(bad_out) else "")
    if bad["AWS_SECRET_ACCESS_KEY"] in everything or secret in everything:
        fail("a secret key is in the output of the wrong-secret run")
    print(f"# wrong secret: {first}")

    # 3. A bucket that does not exist.
    r = ckpt(env, ["--target", "s3://no-such-bucket/e2e", "--shard-bytes", "8M", "-T", "60"])
    first = r.stderr.splitlines()[0] if r.stderr else ""
    if r.returncode != 2 or "'no-such-bucket' does not exist" not in first:
        fail(f"missing bucket: exit {r.returncode}: {first!r}")
    print(f"# missing bucket: {first}")

    # 4. A part below S3's 5 MiB minimum: refused before any request (no server needed).
    r = ckpt(dict(env, AWS_ENDPOINT_URL="http://127.0.0.1:9"),
             ["--target", "s3://ckpt/e2e", "--shard-bytes", "8M", "--part-size", "4M"], np=1)
    first = r.stderr.splitlines()[0] if r.stderr else ""
    if r.returncode != 2 or not first.startswith("ccbench checkpoint: --part-size: 4M is outside S3's part sizes"):
        fail(f"--part-size 4M: exit {r.returncode}: {first!r}")
    print(f"# part size: {first}")

    # 5. --export-to: the lag of a known exporter, and the deadline without one.
    export_checks(env, work)

    # 5b. --tiered with an s3:// target: the shards written to a local directory (training blocked),
    # then drained into the bucket through the same engine; blocking is the local copy only.
    local = os.path.join(work, "local-tier")
    os.makedirs(local)
    tiered_out = os.path.join(work, "tiered.json")
    r = ckpt(env, ["--target", "s3://ckpt/tiered", "--tiered", local, "--shard-bytes", "12M", "--part-size", "5M",
                   "--trials", "1", "--phases", "write", "--keep", "1", "-J", tiered_out, "-T", "60"])
    if r.returncode != 0:
        fail(f"--tiered to s3: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    write = [x for x in rows(tiered_out)["results"] if x["op"] == "checkpoint_write"]
    if len(write) != 1 or not 0 < write[0]["blocking_us"] < write[0]["durable_us"]:
        fail(f"--tiered to s3: blocking/durable: {[(x.get('blocking_us'), x.get('durable_us')) for x in write]}")
    step = write[0]["checkpoint"]["step"]
    for shard in ("rank-00000.shard", "rank-00001.shard"):
        h = aws(env, "s3api", "head-object", "--bucket", "ckpt", "--key", f"tiered/{step}/{shard}")
        if h.returncode != 0 or json.loads(h.stdout)["ContentLength"] != 12 << 20:
            fail(f"--tiered to s3: tiered/{step}/{shard}: {h.stdout}{h.stderr}")
    left = [os.path.join(d, f) for d, _, files in os.walk(local) for f in files]
    if left:
        fail(f"--tiered to s3: the local tier still holds {left}")
    print(f"# tiered to s3: blocking {write[0]['blocking_us'] / 1e6:.3f} s, durable {write[0]['durable_us'] / 1e6:.3f} s")

    # 6. The server killed mid-run: the trial fails, finished trials kept, the upload reported.
    kill_out = os.path.join(work, "kill.json")
    p = subprocess.Popen(MPIRUN + ["-np", "2", CCBENCH, "checkpoint", "--target", "s3://ckpt/kill", "--shard-bytes",
                                   "40M", "--part-size", "5M", "--trials", "20", "-J", kill_out, "-T", "60"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t = time.monotonic()
    seen = []
    for line in p.stdout:
        seen.append(line)
        if line.split()[:2] == ["0", "read"]:
            break
    time.sleep(0.5)  # into trial 1's upload (its step listing takes milliseconds; the write about 1.5 s)
    with open(os.path.join(env["CCB_S3_STATE"], "pids", "proxy.pid")) as f:
        os.kill(int(f.read()), signal.SIGKILL)
    killed = time.monotonic()
    try:
        stdout, stderr = p.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("the run hung after the server was killed")
    took = time.monotonic() - killed
    if p.returncode != 2:
        fail(f"server killed: exit {p.returncode}\n{''.join(seen)}{stdout}\n{stderr}")
    if took > 40:
        fail(f"server killed: the run took {took:.1f} s to fail (-T 60)")
    msg = [l for l in stderr.splitlines() if "no response from" in l]
    if not msg:
        fail(f"server killed: {stderr}")
    if "UploadPart" in msg[-1] and "NOT aborted (abort it: aws s3api abort-multipart-upload)" not in msg[-1]:
        fail(f"server killed: the abandoned upload is not reported: {msg[-1]}")
    doc = rows(kill_out)
    results = doc["results"] if isinstance(doc, dict) else [x for x in doc if "op" in x]
    kept = [x for x in results if x["op"] == "checkpoint_write"]
    if not kept:
        fail("server killed: the finished trial is not in the result file")
    print(f"# server killed: exit 2 after {took:.1f} s, {len(kept)} write row(s) kept: {msg[-1][:300]}")


# The reported lag lies in [DELAY, DELAY + the exporter's copy time + SLACK]: the exporter sees the
# commit within 0.05 s of it, ccbench polls every 0.1 s, and a HeadObject takes milliseconds.
DELAY = 2.0
SLACK = 1.0


def export_checks(env, work):
    target = os.path.join(work, "posix")
    os.makedirs(target)
    log = os.path.join(work, "exporter.log")
    exporter = subprocess.Popen(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                   "dra_exporter.py"),
                                 target, "s3://ckpt/dra", str(DELAY), log], env=env)
    try:
        out = os.path.join(work, "export.json")
        # One step: the exporter copies one step at a time, so a second one would also wait for it.
        r = ckpt(env, ["--target", target, "--shard-bytes", "8M", "--phases", "write", "--trials", "1",
                       "--export-to", "s3://ckpt/dra", "--export-deadline", "40", "-T", "60", "-J", out])
        if r.returncode != 0:
            fail(f"--export-to: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        # The objects are visible before the exporter's CLI returns and logs: wait for its lines.
        for _ in range(200):
            with open(log) as f:
                if len(f.readlines()) >= 1:
                    break
            time.sleep(0.1)
    finally:
        exporter.kill()
        exporter.wait()
    copies = {}
    with open(log) as f:
        for line in f:
            name, _, copy_s = line.split()
            copies[name] = float(copy_s)
    doc = rows(out)
    writes = [x for x in doc["results"] if x["op"] == "checkpoint_write"]
    for x in writes:
        e = x["export"]
        step = x["checkpoint"]["step"]
        hi = DELAY + copies[step] + SLACK
        if not e["finished"] or e["found"] != 2 or not (DELAY <= e["lag_median_s"] <= e["lag_max_s"] <= hi):
            fail(f"--export-to {step}: {e} (band {DELAY}-{hi:.2f} s)")
        if not e["time_to_durable_s"] > e["lag_max_s"]:
            fail(f"--export-to {step}: time to durable in S3 {e['time_to_durable_s']} <= the lag")
        print(f"# export {step}: lag median {e['lag_median_s']:.3f} s, max {e['lag_max_s']:.3f} s "
              f"(delay {DELAY} + copy {copies[step]:.3f} s; band {DELAY}-{hi:.2f})")
    # No exporter: the deadline ends the wait with "export NOT finished".
    out = os.path.join(work, "noexport.json")
    t = time.monotonic()
    r = ckpt(env, ["--target", target, "--shard-bytes", "8M", "--phases", "write", "--export-to", "s3://ckpt/none",
                   "--export-deadline", "2", "-T", "60", "-J", out])
    took = time.monotonic() - t
    line = [l for l in r.stdout.splitlines() if "export NOT finished" in l]
    if r.returncode != 0 or not line or took > 30:
        fail(f"no exporter: exit {r.returncode} in {took:.1f} s\n{r.stdout}\n{r.stderr}")
    e = [x for x in rows(out)["results"] if x["op"] == "checkpoint_write"][0]["export"]
    if e["finished"] or e["found"] != 0 or len(e["missing"]) != 2:
        fail(f"no exporter: {e}")
    print(f"# no exporter: {line[0]}")


if __name__ == "__main__":
    main()
