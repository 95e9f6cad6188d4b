#!/usr/bin/python3
"""A stand-in for FSx for Lustre's data repository auto-export (the e2e test of --export-to):
watches TARGET for committed steps (step-N with its manifest), waits DELAY seconds after it sees
one, then copies the step's shards to s3://BUCKET/PREFIX/step-N/ with Debian's AWS CLI, and logs
"step-N seen_after_s copy_s" lines (copy_s: the CLI's time) to LOG.
usage: dra_exporter.py TARGET s3://BUCKET/PREFIX DELAY LOG
"""
import os
import subprocess
import sys
import time

target, dest, delay, log = sys.argv[1], sys.argv[2].rstrip("/"), float(sys.argv[3]), sys.argv[4]
done = set()
with open(log, "w", buffering=1) as out:
    while True:
        for name in sorted(os.listdir(target)):
            path = os.path.join(target, name)
            if not name.startswith("step-") or name in done or not os.path.exists(
                    os.path.join(path, "ccbench-manifest.json")):
                continue
            seen = time.monotonic()
            done.add(name)
            time.sleep(delay)
            t = time.monotonic()
            subprocess.run(["/usr/bin/aws", "--endpoint-url", os.environ["AWS_ENDPOINT_URL"], "s3", "cp", "--recursive",
                            "--only-show-errors", "--exclude", "*", "--include", "*.shard", path, f"{dest}/{name}/"],
                           check=True, env=dict(os.environ, AWS_CONFIG_FILE="/dev/null"))
            out.write(f"{name} {t - seen:.3f} {time.monotonic() - t:.3f}\n")
        time.sleep(0.05)
