"""`ccbench replay` under a real mpirun: exact rows of the hand-made traces, usage errors, endings."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = os.environ.get("CCBENCH_SOURCE", ".")
DATA = os.path.join(SOURCE, "tests", "data", "replay")
TWO = os.path.join(DATA, "two_ranks.trace.json")
FOUR = os.path.join(DATA, "four_ranks.trace.json")
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
SCHEMA = os.path.join(SOURCE, "configs", "schema", "result.schema.json")


def env():
    e = dict(os.environ)
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return e


def replay(np, args, timeout=60):
    return subprocess.run(MPIRUN + ["-np", str(np), CCBENCH, "replay"] + args, capture_output=True, text=True,
                          timeout=timeout, env=env())


def load(path):
    with open(path) as f:
        return json.load(f)


def validate(doc):
    try:
        import jsonschema
    except ImportError:  # scripts/setup.sh installs python3-jsonschema; the other checks still run
        return
    jsonschema.validate(doc, load(SCHEMA))


def by_site(doc, trial=0):
    return [r for r in doc["results"] if r["trial"] == trial]


class ReplayRows(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="ccbench_replay_")
        self.addCleanup(self.dir.cleanup)

    def test_two_ranks_rows_calls_and_bytes(self):
        out = os.path.join(self.dir.name, "two.json")
        p = replay(2, [TWO, "--steps", "4", "--trials", "2", "--check", "1", "-J", out])
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        validate(doc)
        self.assertEqual(doc["run"]["status"], "complete")
        self.assertEqual(doc["config"]["replay"]["steps"], 4)
        self.assertEqual(doc["config"]["replay"]["gaps"], "traced")
        rows = by_site(doc)
        self.assertEqual([(r["op"], r["dtype"], r["bytes"], r["count"], r["replay"]["calls"]) for r in rows], [
            ("allreduce", "float", 4096, 1024, 2),
            ("allgather", "int32", 64, 16, 1),
            ("broadcast", "double", 64, 8, 1),
            ("alltoall", "float", 256, 64, 1),
            ("replay_step", "none", 4096 * 2 + 64 + 64 + 256, 5, 5),
        ])
        for r in doc["results"]:
            self.assertEqual(len(r["samples_us"]), 4)
            self.assertEqual(r["wrong"], 0)
            self.assertEqual(r["ranks"], 2)
        self.assertEqual(len(by_site(doc, 1)), 5)
        # Each site's samples are part of the step's (times of the same steps, max over ranks).
        step = rows[-1]
        for r in rows[:-1]:
            self.assertLessEqual(r["time_us"]["median"], step["time_us"]["max"])
            self.assertGreater(r["replay"]["fraction_of_step"], 0)

    def test_four_ranks_two_groups(self):
        out = os.path.join(self.dir.name, "four.json")
        p = replay(4, [FOUR, "--steps", "3", "--gaps", "none", "-J", out])
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        validate(doc)
        rows = by_site(doc)
        self.assertEqual([(r["op"], r["replay"].get("group"), r["ranks"], r["bytes"], r["replay"]["calls"])
                          for r in rows], [
            ("allreduce", "world", 4, 4096, 2),
            ("allgather", "world", 4, 64, 1),
            ("allreduce", "low", 2, 1024, 2),
            ("broadcast", "world", 4, 64, 1),
            ("alltoall", "world", 4, 256, 1),
            ("reduce_scatter", "low", 2, 128, 1),
            ("allreduce", "high", 2, 1024, 2),
            ("reduce_scatter", "high", 2, 128, 1),
            ("replay_step", None, 4, 4096 * 2 + 64 + 1024 * 2 + 64 + 256 + 128, 8),
        ])
        self.assertEqual(doc["config"]["replay"]["gaps"], "none")

    def test_two_ranks_trace_on_four_with_a_map(self):
        out = os.path.join(self.dir.name, "mapped.json")
        p = replay(4, [TWO, "--steps", "2", "--gaps", "0.5", "--ranks-map", "1,0,0,1", "-J", out])
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        validate(doc)
        self.assertEqual(doc["config"]["replay"]["ranks_map"], [1, 0, 0, 1])
        self.assertEqual(doc["config"]["replay"]["copies"], 2)
        rows = by_site(doc)
        self.assertEqual([(r["op"], r["ranks"], r["replay"]["calls"]) for r in rows],
                         [("allreduce", 2, 2), ("allgather", 2, 1), ("broadcast", 2, 1), ("alltoall", 2, 1),
                          ("replay_step", 4, 5)])

    def test_reduce_and_barrier_rows(self):
        # tests/data/replay/reduce_barrier.trace.json: a reduce (max) to rank 2 and a barrier on the
        # world of 3, then a reduce on the group of ranks 2 and 1 to rank 2; the data checked on the roots.
        path = os.path.join(DATA, "reduce_barrier.trace.json")
        out = os.path.join(self.dir.name, "reduce_barrier.json")
        p = replay(3, [path, "--steps", "3", "--check", "1", "-J", out])
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        validate(doc)
        self.assertEqual([(r["op"], r["dtype"], r["bytes"], r["count"], r["ranks"], r["replay"]["calls"], r["wrong"])
                          for r in by_site(doc)], [
            ("reduce", "float", 1024, 256, 3, 1, 0),
            ("barrier", "uint8", 0, 0, 3, 1, 0),
            ("reduce", "int32", 256, 64, 2, 1, 0),
            ("replay_step", "none", 1024 + 256, 3, 3, 3, 0),
        ])


class ReplaySendRecv(unittest.TestCase):
    """Both ranks send first, past the eager limit: posted as one batch they cannot deadlock."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="ccbench_replay_sr_")
        self.addCleanup(self.dir.cleanup)

    def test_pair_sent_first_on_both_ranks(self):
        out = os.path.join(self.dir.name, "sr.json")
        p = replay(2, [os.path.join(DATA, "send_recv.trace.json"), "--steps", "3", "-T", "20", "-J", out], timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        validate(doc)
        rows = by_site(doc)
        self.assertEqual([(r["op"], r["bytes"], r["count"], r["replay"]["calls"]) for r in rows], [
            ("send", 1048576, 262144, 1),
            ("recv", 524288, 131072, 1),
            ("allreduce", 4096, 1024, 1),
            ("send", 524288, 131072, 1),
            ("recv", 1048576, 262144, 1),
            ("replay_step", 1048576 + 524288 + 4096, 3, 3),
        ])
        # A batch's time is shared equally by its calls.
        self.assertEqual(rows[0]["samples_us"], rows[1]["samples_us"])
        self.assertEqual(rows[3]["samples_us"], rows[4]["samples_us"])


class ReplayUsage(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="ccbench_replay_usage_")
        self.addCleanup(self.dir.cleanup)

    def assert_usage(self, p, *needles):
        self.assertEqual(p.returncode, 2, p.stderr)
        lines = [l for l in p.stderr.splitlines() if l.startswith("ccbench replay:")]
        self.assertEqual(len(lines), 1, p.stderr)
        for needle in needles:
            self.assertIn(needle, lines[0])

    def test_world_size_differs_without_a_map(self):
        out = os.path.join(self.dir.name, "never.json")
        self.assert_usage(replay(2, [FOUR, "-J", out]), "--ranks-map", "the trace has 4 ranks and the job 2")
        self.assertFalse(os.path.exists(out))

    def test_bad_gaps(self):
        self.assert_usage(replay(2, [TWO, "--gaps", "fast"]), "--gaps 'fast'")

    def test_bad_map(self):
        self.assert_usage(replay(2, [TWO, "--ranks-map", "0,0"]), "--ranks-map '0,0'")

    def test_missing_trace(self):
        missing = os.path.join(self.dir.name, "missing.trace.json")
        self.assert_usage(replay(2, [missing]), missing)

    def test_malformed_trace(self):
        bad = os.path.join(self.dir.name, "bad.trace.json")
        with open(bad, "w") as f:
            f.write('{"trace_version": 1, "world_size": 2, "ranks": [')
        self.assert_usage(replay(2, [bad]), bad)

    def test_a_call_log_that_cannot_be_written(self):
        # --log-calls under a plain file: refused before any call, naming the flag and rank 0's file.
        plain = os.path.join(self.dir.name, "plain")
        with open(plain, "w") as f:
            f.write("keep")
        out = os.path.join(self.dir.name, "never.json")
        prefix = os.path.join(plain, "calls")
        self.assert_usage(replay(2, [TWO, "--log-calls", prefix, "-J", out]), f"--log-calls {prefix}.rank0.json")
        self.assertFalse(os.path.exists(out))
        with open(plain) as f:
            self.assertEqual(f.read(), "keep")

    def test_an_alltoallv_one_member_does_not_issue_names_the_group(self):
        # Every op of the format is replayed; an alltoallv whose other member never issues it would
        # wait for ever, so it is refused up front, naming the group and both ranks' counts.
        doc = load(TWO)
        doc["ranks"][1]["calls"][3] = {"op": "alltoallv", "dtype": "float", "count": 4, "counts": [1, 3],
                                       "group": "world", "origin": "nccl_log"}
        path = os.path.join(self.dir.name, "alltoallv.trace.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        self.assert_usage(replay(2, [path]), path + ": group 'world': trace rank 1 issues 1 alltoallv calls and "
                          "trace rank 0 0: every member must issue each one")


class ReplayEndings(unittest.TestCase):
    """A long replay (the traced 20 us gap scaled to 20 ms: about 25 ms a step) stopped mid-way."""

    def start(self, out, label):
        args = [TWO, "--steps", "20", "--trials", "1000", "--gaps", "1000", "-T", "5", "-J", out, "--label", label]
        return subprocess.Popen(MPIRUN + ["-np", "2", CCBENCH, "replay"] + args, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env(), start_new_session=True)

    def rank_pids(self, label):
        """{rank: pid} of the replay's ranks (run's helper: the --label on their command lines)."""
        sys.path.insert(0, os.path.join(SOURCE, "tests", "integration", "run"))
        from ccbench_mpi import rank_pids
        return rank_pids(label)

    def wait_rows(self, jsonl, n, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if os.path.exists(jsonl):
                with open(jsonl) as f:
                    if sum(1 for line in f if line.strip()) >= n:
                        return
            time.sleep(0.05)
        self.fail(f"no {n} rows in {jsonl} within {timeout} s")

    def finish(self, proc, timeout):
        t0 = time.time()
        try:
            _, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            self.fail("the replay did not end in time")
        return proc.returncode, stderr, time.time() - t0

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="ccbench_replay_end_")
        self.addCleanup(self.dir.cleanup)

    def test_sigterm_keeps_the_finished_steps(self):
        out = os.path.join(self.dir.name, "term.json")
        proc = self.start(out, "replay-term")
        self.wait_rows(out + "l", 5)
        time.sleep(0.2)  # into the second trial
        pids = self.rank_pids("replay-term")
        os.kill(pids[0], signal.SIGTERM)
        rc, stderr, _ = self.finish(proc, 30)
        self.assertNotEqual(rc, 0)
        doc = load(out)
        validate(doc)
        self.assertEqual(doc["run"]["status"], "interrupted", stderr)
        self.assertEqual(doc["run"]["exit_code"], 128 + signal.SIGTERM)
        steps = [r for r in doc["results"] if r["op"] == "replay_step"]
        self.assertGreaterEqual(len(steps), 2)
        for r in doc["results"]:
            self.assertEqual(len(r["samples_us"]), len(steps[r["trial"]]["samples_us"]))
        for r in steps[:-1]:
            self.assertEqual(r["replay"]["steps"], 20)
        # The trial the signal stopped keeps the steps it finished (fewer than 20, unless it had just ended).
        self.assertGreaterEqual(steps[-1]["replay"]["steps"], 1)
        self.assertEqual(len(steps[-1]["samples_us"]), steps[-1]["replay"]["steps"])

    def test_killed_rank_ends_within_the_watchdog(self):
        out = os.path.join(self.dir.name, "kill.json")
        proc = self.start(out, "replay-kill")
        self.wait_rows(out + "l", 5)
        pids = self.rank_pids("replay-kill")
        kept = sum(1 for line in open(out + "l") if line.strip())
        os.kill(pids[1], signal.SIGKILL)
        rc, stderr, elapsed = self.finish(proc, 30)
        self.assertNotEqual(rc, 0)
        self.assertLess(elapsed, 5 + 10)
        if rc == 4:
            self.assertIn("peer failed", stderr)
        doc = load(out)
        self.assertNotEqual(doc["run"]["status"], "complete")
        self.assertGreaterEqual(len(doc["results"]), kept)


if __name__ == "__main__":
    unittest.main()
