#!/usr/bin/python3
"""Issue 27 items 7, 8 and 9: `ccbench checkpoint` against S3 servers that misbehave on purpose (a
small HTTP server on 127.0.0.1 here; a real server will not do these on demand). Each case ends
well inside its -T, and the test bounds every run with a timeout of its own:

- a server that trickles a listing at 2 bytes a second: exit 2 when the request's deadline (a
  quarter of -T) passes, naming --target and the deadline;
- a server that accepts and never answers: the same, at the deadline, not after 5 stalled tries;
- a ListObjectsV2 that answers IsTruncated=true with the same token forever: exit 2 naming the
  repeated token (the result file says failed), not a run that never ends;
- user:password in AWS_ENDPOINT_URL or --s3-endpoint: in no message, not in the result file (its
  command line and the OMPI_ARGV of its environment);
- --direct, --layout shared-file, --no-fsync, --export-to on an s3:// target: the engine refuses
  each (exit 2, one line naming the flag and the engine) before any request;
- --export-to with a HeadObject that stalls and --export-deadline 1: "export NOT finished" at the
  deadline, exit 0, the row kept (the watchdog does not end the run).
"""
import http.server
import json
import os
import shutil
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

CCBENCH = os.environ.get("CCBENCH", str(Path(__file__).resolve().parents[3] / "build" / "ccbench"))
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none", "-np", "1"]
SECRET = "hunter2"
EMPTY_LISTING = b"<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, body, status=200):
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def stall(self):
        self.server.stalled.set()
        self.server.done.wait(120)  # until the test ends: the client's deadline must end the request

    def do_GET(self):
        mode = self.server.mode
        if mode == "silent":
            return self.stall()
        if mode == "trickle":
            body = EMPTY_LISTING + b" " * 4000
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for i in range(0, len(body), 2):
                if self.server.done.is_set():
                    return
                try:
                    self.wfile.write(body[i:i + 2])
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(1)
            return
        if mode == "token" and "max-keys=1000" in self.path:
            return self.answer(b"<ListBucketResult><IsTruncated>true</IsTruncated>"
                               b"<NextContinuationToken>AAAA</NextContinuationToken></ListBucketResult>")
        return self.answer(EMPTY_LISTING)

    def do_HEAD(self):
        if self.server.mode == "stalled_head":
            return self.stall()
        return self.answer(b"", 404)

    def do_PUT(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.answer(b"")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True

    def __init__(self, mode):
        super().__init__(("127.0.0.1", 0), Handler)
        self.mode = mode
        self.done = threading.Event()
        self.stalled = threading.Event()
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"

    def stop(self):
        self.done.set()
        self.shutdown()
        self.server_close()


def env(**extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    e.update(AWS_ACCESS_KEY_ID="AKIDHOSTILE", AWS_SECRET_ACCESS_KEY="hostileSecretKey", OMPI_ALLOW_RUN_AS_ROOT="1",
             OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    e.update(extra)
    return e


class HostileS3(unittest.TestCase):
    def setUp(self):
        self.d = Path(tempfile.mkdtemp(prefix="ccbench-hostile-s3-"))
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.stop()
        shutil.rmtree(self.d, ignore_errors=True)

    def server(self, mode):
        s = Server(mode)
        self.servers.append(s)
        return s

    def checkpoint(self, args, timeout, **extra):
        t0 = time.monotonic()
        p = subprocess.run(MPIRUN + [CCBENCH, "checkpoint"] + args, env=env(**extra), capture_output=True, text=True,
                           timeout=timeout, cwd=self.d)
        return p, time.monotonic() - t0

    def test_a_trickling_listing_ends_at_the_requests_deadline(self):
        s = self.server("trickle")
        p, took = self.checkpoint(["--target", "s3://ckpt/x", "--shard-bytes", "8M", "--s3-endpoint", s.url,
                                   "-T", "12"], timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        first = p.stderr.splitlines()[0]
        self.assertTrue(first.startswith("ccbench checkpoint: --target s3://ckpt/x: S3 ListObjectsV2 s3://ckpt/x/:"),
                        first)
        self.assertIn("the call's deadline (3.0 s, a quarter of -T) passed", first)
        print(f"trickle: exit 2 after {took:.1f} s: {first}", file=sys.stderr)

    def test_a_server_that_never_answers_ends_at_the_requests_deadline(self):
        s = self.server("silent")
        p, took = self.checkpoint(["--target", "s3://ckpt/x", "--shard-bytes", "8M", "--s3-endpoint", s.url,
                                   "-T", "10"], timeout=45)
        self.assertEqual(p.returncode, 2, p.stderr)
        first = p.stderr.splitlines()[0]
        self.assertIn(f"--target s3://ckpt/x: S3 ListObjectsV2 s3://ckpt/x/: no response from {s.url}", first)
        self.assertIn("the call's deadline (2.5 s, a quarter of -T) passed", first)
        print(f"silent: exit 2 after {took:.1f} s", file=sys.stderr)

    def test_a_repeated_continuation_token_fails_the_run_and_userinfo_is_nowhere(self):
        s = self.server("token")
        endpoint = s.url.replace("http://", f"http://user:{SECRET}@")
        out = self.d / "token.json"
        p, took = self.checkpoint(["--target", "s3://ckpt/x", "--shard-bytes", "8M", "--s3-endpoint", endpoint,
                                   "-T", "20", "-J", str(out)], timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("S3 ListObjectsV2 s3://ckpt/x/: the server sent the continuation token 'AAAA' again", p.stderr)
        text = out.read_text()
        doc = json.loads(text)
        self.assertEqual(doc["run"]["status"], "failed")
        self.assertEqual(doc["config"]["checkpoint"]["s3"]["endpoint"], s.url)
        self.assertEqual(doc["config"]["backend"], "s3")  # the engine's name (issue 29 item 3)
        self.assertIn(s.url.replace("http://", "http://***@"), doc["run"]["command"])
        for where, what in (("stdout", p.stdout), ("stderr", p.stderr), ("result file", text)):
            self.assertNotIn(SECRET, what, where)

    def test_userinfo_in_aws_endpoint_url_is_in_no_message(self):
        # A port nothing listens on (bound, never listened, closed): connections are refused at once.
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            url = f"http://127.0.0.1:{closed.getsockname()[1]}"
        endpoint = url.replace("http://", f"http://user:{SECRET}@")
        p, _ = self.checkpoint(["--target", "s3://ckpt/x", "--shard-bytes", "8M", "-T", "20"], timeout=45,
                               AWS_ENDPOINT_URL=endpoint)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"no response from {url}:", p.stderr)
        self.assertNotIn(SECRET, p.stdout + p.stderr)
        # A target that is not a bucket name echoes no password either.
        p, _ = self.checkpoint(["--target", f"s3://user:{SECRET}@ckpt/x", "--shard-bytes", "8M"], timeout=45,
                               AWS_ENDPOINT_URL=endpoint)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--target s3://***@ckpt/x:", p.stderr)
        self.assertNotIn(SECRET, p.stdout + p.stderr)

    def test_what_the_s3_engine_cannot_do_it_refuses_before_any_request(self):
        """The engine refuses (exit 2, one line naming the flag and the engine), not the command line,
        and before any request: the endpoint is a port nothing listens on, so a request would fail as
        'no response' instead."""
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            url = f"http://127.0.0.1:{closed.getsockname()[1]}"
        base = ["--target", "s3://ckpt/x", "--shard-bytes", "8M", "--s3-endpoint", url, "-T", "20"]
        cases = [
            (["--direct"], "--direct: not for the s3 engine (no page cache to bypass)"),
            (["--layout", "shared-file"], "--layout shared-file: not for the s3 engine (an object has one writer)"),
            (["--no-fsync"], "--no-fsync: not for the s3 engine (an upload is durable when it completes)"),
            (["--export-to", "s3://ckpt/y"],
             "--export-to: for a POSIX --target, not the s3 engine's (it is already in S3)"),
        ]
        for extra, message in cases:
            with self.subTest(flags=extra):
                p, _ = self.checkpoint(base + extra, timeout=45)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(p.stderr.splitlines()[0], f"ccbench checkpoint: {message}")
        self.assertEqual(list(self.d.iterdir()), [])  # no result file, nothing written here

    def test_a_stalled_head_object_ends_the_export_wait_at_its_deadline(self):
        s = self.server("stalled_head")
        target = self.d / "posix"
        target.mkdir()
        out = self.d / "export.json"
        p, took = self.checkpoint(["--target", str(target), "--shard-bytes", "64K", "--transfer-size", "64K",
                                   "--phases", "write", "--export-to", "s3://ckpt/exp", "--export-deadline", "1",
                                   "--s3-endpoint", s.url, "-T", "15", "--keep", "1", "-J", str(out)], timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(s.stalled.is_set(), "no HeadObject reached the server")
        self.assertIn("# export NOT finished: 1 of 1 shards not in s3://ckpt/exp after the 1 s deadline "
                      "(first: exp/step-000001/rank-00000.shard)", p.stdout)
        doc = json.loads(out.read_text())
        writes = [r for r in doc["results"] if r["op"] == "checkpoint_write"]
        self.assertEqual(len(writes), 1)
        self.assertFalse(writes[0]["export"]["finished"])
        self.assertEqual((writes[0]["backend"], doc["config"]["backend"]), ("posix", "posix"))
        self.assertEqual(doc["run"]["status"], "complete")
        self.assertTrue((target / "step-000001" / "rank-00000.shard").exists())
        print(f"stalled HeadObject: exit 0 after {took:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
