#!/usr/bin/python3
"""Known answers of the replay with a real framework: the PyTorch 1.13 job of tests/e2e/trace
(torch_job.py: DDP's start-up, buckets and rebuild, an FSDP-like layer loop, a broadcast, an
all_to_all_single and an all_reduce on a second process group) run on TORCH_JOB_WORLD gloo processes
(2 or 4), its execution graphs and profiler traces imported, and the trace replayed under a real
mpirun with as many ranks. Each rank's own log of what it issued (--log-calls) must equal the trace's
calls exactly (op, dtype, count, group, root, order), equal the job's own log of its calls, and hold
the same bytes; each call issued once per pass. On 4 ranks the imported trace puts the pair's
all_reduce on the world (the graph does not name the group) and is refused naming it; the trace with
the job's own groups is replayed instead."""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "trace"))
import test_torch_job as torch_trace  # noqa: E402  (the job's runner, shared with trace.torch_job)

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
WORLD = int(os.environ.get("TORCH_JOB_WORLD", "2"))
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
STEPS = 3  # replayed steps: every call is issued 1 + STEPS times (the first step is not recorded)
ELEMENT_BYTES = {"float": 4, "double": 8, "int64": 8, "int32": 4}


def env():
    e = dict(os.environ)
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    e.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return e


def replay(np, args):
    return subprocess.run(MPIRUN + ["-np", str(np), CCBENCH, "replay", *args], capture_output=True, text=True,
                          timeout=120, env=env())


def load(path):
    with open(path) as f:
        return json.load(f)


class ReplayTorchJob(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ccbench-replay-job-")
        try:
            cls.logs = torch_trace.run_torch_job(cls.dir, WORLD)
            files = [os.path.join(cls.dir, f"{kind}_rank{r}.json") for kind in ("eg", "prof") for r in range(WORLD)]
            cls.trace_path = os.path.join(cls.dir, "job.trace.json")
            p = subprocess.run([CCBENCH, "trace", "import", "pytorch-et", *files, "--out", cls.trace_path],
                               capture_output=True, text=True, timeout=60)
            if p.returncode != 0:
                raise AssertionError(f"trace import failed ({p.returncode}): {p.stderr}")
            cls.trace = load(cls.trace_path)
        except BaseException:
            shutil.rmtree(cls.dir)
            raise

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def with_the_jobs_groups(self):
        """The trace with the job's own groups: the pair's calls (the job logs their group) on a group of
        ranks 0 and 1. The graph does not say the group, so the import put them on the world."""
        doc = copy.deepcopy(self.trace)
        doc["groups"].append({"id": "pair", "ranks": [0, 1], "members_from_source": True})
        for rank in doc["ranks"]:
            logged = self.logs[rank["rank"]]
            self.assertEqual(len(rank["calls"]), len(logged))
            for call, own in zip(rank["calls"], logged):
                call["group"] = own["group"]
        path = os.path.join(self.dir, "job.groups.trace.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path, doc

    def replay_and_read_logs(self, np, trace_path, name, extra=()):
        prefix = os.path.join(self.dir, name)
        out = prefix + ".json"
        p = replay(np, [trace_path, "--steps", str(STEPS), "--gaps", "none", "-T", "60", "--log-calls", prefix,
                        "-J", out, *extra])
        self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
        return load(out), [load(f"{prefix}.rank{r}.json") for r in range(np)]

    @staticmethod
    def issued(log, ranks_map):
        """The log's calls in the trace's terms: the root as the trace rank its job rank replays."""
        out = []
        for c in log["calls"]:
            e = {k: c[k] for k in ("op", "dtype", "count", "group", "redop") if k in c}
            if "root" in c:
                e["root"] = ranks_map[c["members"][c["root"]]]
            out.append(e)
        return out

    @staticmethod
    def traced(doc, trace_rank):
        calls = next(r for r in doc["ranks"] if r["rank"] == trace_rank)["calls"]
        out = []
        for c in calls:
            e = {k: c[k] for k in ("op", "dtype", "count", "group", "redop") if k in c}
            if "root" in c:
                group = next(g for g in doc["groups"] if g["id"] == c["group"])
                e["root"] = group["ranks"][c["root"]]
            out.append(e)
        return out

    def own(self, rank, pair_group):
        """The job's own log of rank's calls, the pair's group named as the replayed trace names it."""
        out = []
        for c in self.logs[rank]:
            e = {k: c[k] for k in ("op", "dtype", "count", "redop", "root") if k in c}
            e["group"] = pair_group if c["group"] == "pair" else c["group"]
            out.append(e)
        return out

    def check_logs(self, result, logs, doc, pair_group):
        ranks_map = result["config"]["replay"]["ranks_map"]
        for log in logs:
            rank = log["rank"]
            with self.subTest(rank=rank):
                self.assertEqual(log["passes"], 1 + STEPS)
                self.assertEqual([c["order"] for c in log["calls"]], list(range(len(log["calls"]))))
                self.assertEqual({c["issued"] for c in log["calls"]}, {1 + STEPS})
                self.assertEqual(self.issued(log, ranks_map), self.traced(doc, log["trace_rank"]))
                self.assertEqual(self.issued(log, ranks_map), self.own(log["trace_rank"], pair_group))
                job_bytes = sum(c["count"] * ELEMENT_BYTES[c["dtype"]] for c in self.logs[log["trace_rank"]])
                self.assertEqual(sum(c["bytes"] for c in log["calls"]), job_bytes)
                self.assertEqual(log["bytes_per_pass"], job_bytes)
                self.assertEqual(len(log["calls"]), 26 if log["trace_rank"] < 2 else 24)
        # The step's row: the most calls and bytes per rank, as the logs count them.
        step = next(r for r in result["results"] if r["op"] == "replay_step")
        self.assertEqual(step["replay"]["calls"], max(len(log["calls"]) for log in logs))
        self.assertEqual(step["bytes"], max(log["bytes_per_pass"] for log in logs))
        self.assertEqual(step["replay"]["steps"], STEPS)
        self.assertEqual(step["wrong"], 0)

    def test_replay_issues_the_traced_calls(self):
        if WORLD == 2:  # the pair is the world: the trace as imported
            result, logs = self.replay_and_read_logs(2, self.trace_path, "calls")
            self.check_logs(result, logs, self.trace, "world")
            for log in logs:
                self.assertEqual({tuple(c["members"]) for c in log["calls"]}, {(0, 1)})
            return
        # The import wrote the pair's all_reduce on the world, which ranks 2 and 3 do not issue: the
        # replay refuses it, naming the group and the first collective the ranks do not issue alike.
        p = replay(WORLD, [self.trace_path, "--steps", "1", "-T", "60"])
        self.assertEqual(p.returncode, 2, p.stderr[-2000:])
        first = p.stderr.splitlines()[0]
        self.assertEqual(first, f"ccbench replay: {self.trace_path}: group 'world': its ranks do not issue its "
                                "collectives alike: collective 11 on it: ranks[0].calls[11] is allreduce float x12, "
                                "ranks[2].calls[11] is broadcast int32 x11 root 0 (replayed, they would not match; "
                                "the source may not name the group the calls were on: see the trace's not_in_source)")
        path, doc = self.with_the_jobs_groups()
        result, logs = self.replay_and_read_logs(WORLD, path, "calls")
        self.check_logs(result, logs, doc, "pair")
        for log in logs:
            members = {c["group"]: c["members"] for c in log["calls"]}
            self.assertEqual(members["world"], list(range(WORLD)))
            if log["rank"] < 2:
                self.assertEqual(members["pair"], [0, 1])
            else:
                self.assertNotIn("pair", members)

    def test_ranks_map(self):
        if WORLD == 2:
            # docs/replay.md, "Mapping": 0,1,0,1 runs the 2-rank trace twice, copy c on job ranks
            # 2c and 2c + 1, each on communicators of its own.
            result, logs = self.replay_and_read_logs(4, self.trace_path, "mapped", ["--ranks-map", "0,1,0,1"])
            self.check_logs(result, logs, self.trace, "world")
            for log in logs:
                self.assertEqual((log["trace_rank"], log["copy"]), (log["rank"] % 2, log["rank"] // 2))
                copy_members = [2 * log["copy"], 2 * log["copy"] + 1]
                self.assertEqual({tuple(c["members"]) for c in log["calls"]}, {tuple(copy_members)})
                self.assertEqual({c["comm_rank"] for c in log["calls"]}, {log["rank"] % 2})
            self.assertEqual(result["config"]["replay"]["copies"], 2)
            return
        # Onto 2 ranks: one trace rank's calls would have to split over job ranks, which the doc
        # refuses ("Mapping"): exit 2 naming --ranks-map, before any call.
        p = replay(2, [self.trace_path, "--ranks-map", "0,1"])
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.splitlines()[0],
                         "ccbench replay: --ranks-map '0,1': trace rank 2 appears 0 times and rank 0 1: every trace "
                         "rank must appear equally often (each set of them replays the whole trace)")


if __name__ == "__main__":
    unittest.main()
