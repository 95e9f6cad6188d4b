#!/usr/bin/python3
"""Known answers from a real framework: torch_job.py builds DistributedDataParallel (its start-up
collectives traced), trains two steps (DDP's gradient buckets, its bucket rebuild before step 2, an
FSDP-like layer loop of all_gathers and all_reduces, a broadcast, an all_to_all_single and an
all_reduce on a second process group) on TORCH_JOB_WORLD gloo processes (2 or 4), writing PyTorch
1.13's execution graph and profiler trace per rank and its own log of the calls. The log must be the
hand-computed sequence below, and the imported trace's calls must equal it exactly, except what the
source cannot see, which the trace must name in its provenance: the process group (every call on the
world) and that all_to_all_single has no c10d node. Given the profiler traces too, every call is
linked (times from the profiler, shapes from the graph)."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import unittest

import jsonschema

CCBENCH = os.environ.get("CCBENCH", "build/ccbench")
SOURCE = os.environ.get("CCBENCH_SOURCE", ".")
JOB = os.path.join(SOURCE, "tests/e2e/trace/torch_job.py")
WORLD = int(os.environ.get("TORCH_JOB_WORLD", "2"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_torch_job(out_dir, world):
    """Runs torch_job.py on `world` gloo processes writing into `out_dir`; returns each rank's own log
    of its calls ({rank: calls}). Shared with tests/e2e/replay."""
    # A free port can be taken by another test between free_port() and gloo's bind: only then
    # is the job started again, on another port.
    for attempt in range(3):
        # Its own session, so a timeout ends the spawned workers too.
        job = subprocess.Popen([sys.executable, JOB, out_dir, str(world), str(free_port())], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            _, err = job.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            job.communicate()
            raise AssertionError("torch_job.py did not finish in 240 s")
        if job.returncode == 0 or "Address already in use" not in err:
            break
    if job.returncode != 0:
        raise AssertionError(f"torch_job.py failed ({job.returncode}): {err[-3000:]}")
    logs = {}
    for rank in range(world):
        with open(os.path.join(out_dir, f"calls_rank{rank}.json")) as f:
            logs[rank] = json.load(f)["calls"]
    return logs


class TorchJob(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ccbench-trace-job-")
        cls.logs = run_torch_job(cls.dir, WORLD)
        with open(os.path.join(SOURCE, "configs/schema/trace.schema.json")) as f:
            cls.schema = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def files(self, kind):
        return [os.path.join(self.dir, f"{kind}_rank{r}.json") for r in range(WORLD)]

    def import_trace(self, files, name):
        out = os.path.join(self.dir, name)
        p = subprocess.run([CCBENCH, "trace", "import", "pytorch-et", *files, "--out", out], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            doc = json.load(f)
        jsonschema.validate(doc, self.schema)
        return out, doc

    def expected(self, rank):
        """The job's log as the trace must say it: the process group is not in the source (world)."""
        out = []
        for c in self.logs[rank]:
            e = {k: c[k] for k in ("op", "dtype", "count", "step") if k in c}
            e["group"] = "world"
            for k in ("redop", "root"):
                if k in c:
                    e[k] = c[k]
            out.append(e)
        return out

    def hand_computed_log(self, rank):
        """The calls each rank issues, from the job's model by hand (op, dtype, count, step)."""
        params = 4 * (64 * 64 + 64) + (64 * 8 + 8)  # DDP's model: 4 64x64 layers and a 64x8 one
        startup = [("allgather", "int64", 1, 0),  # verify_params_across_processes: the parameter count
                   ("broadcast", "int64", 5 * 4 + 5 * 2, 0),  # sizes and strides of 5 weights, 5 biases
                   ("broadcast", "float", params, 0)]  # the parameters, one coalesced buffer
        buckets = {1: [params],  # 1.13's first step reduces one bucket of every gradient
                   2: [64 * 8 + 8 + 64 * 64 + 64] + [64 * 64 + 64] * 3}  # rebuilt: 8 KiB, then 15 KiB caps
        calls = list(startup)
        for step in (1, 2):
            if step == 2:  # the rebuild: the parameters' bucket indices and the bucket count, the bucket sizes
                calls += [("broadcast", "int32", 10 + 1, step), ("broadcast", "int32", len(buckets[2]), step)]
            calls += [("allreduce", "float", n, step) for n in buckets[step]]
            calls += [("allgather", "float", 32 * 48 // WORLD, step), ("allgather", "float", 48 * 16 // WORLD, step),
                      ("allreduce", "float", 48 * 16, step), ("allreduce", "float", 32 * 48, step),
                      ("broadcast", "int64", 16, step), ("allreduce", "double", 40, step),
                      ("alltoall", "float", 8 * WORLD, step)]
            if rank in (0, 1):
                calls.append(("allreduce", "float", 12, step))
        return calls

    def test_the_job_logs_the_hand_computed_calls(self):
        for rank in range(WORLD):
            with self.subTest(rank=rank):
                logged = [(c["op"], c["dtype"], c["count"], c["step"]) for c in self.logs[rank]]
                self.assertEqual(logged, self.hand_computed_log(rank))
                self.assertEqual(len(logged), 26 if rank < 2 else 24)

    def observed(self, doc, rank):
        calls = next(r for r in doc["ranks"] if r["rank"] == rank)["calls"]
        keys = ("op", "dtype", "count", "step", "group", "redop", "root")
        return [{k: c[k] for k in keys if k in c} for c in calls]

    def check_provenance(self, doc):
        notes = " | ".join(doc["provenance"]["not_in_source"])
        self.assertIn("process group", notes)
        alltoalls = sum(1 for r in range(WORLD) for c in self.logs[r] if c["op"] == "alltoall")
        self.assertIn(f"{alltoalls} all_to_all calls have no c10d node", notes)
        self.assertEqual(doc["groups"], [{"id": "world", "ranks": list(range(WORLD)), "members_from_source": False}])
        # The job's second group is real; the trace must not invent it. With more ranks than the
        # pair, the ranks outside it do not issue its calls: the trace names that site (2 calls, one
        # a step, on ranks 0-1) and no other.
        self.assertTrue(any(c["group"] == "pair" for c in self.logs[0]))
        uneven = [n for n in doc["provenance"]["not_in_source"] if "do not issue it alike" in n]
        if WORLD == 2:
            self.assertEqual(uneven, [])
        else:
            self.assertEqual(uneven, [f"process group of allreduce float x12: the ranks do not issue it alike (calls: "
                                      f"2 on ranks 0-1, 0 on ranks 2-{WORLD - 1}): on a group the source does not "
                                      f"name, or with sizes that differ by rank; written on the world like every call"])

    def test_execution_graph_alone(self):
        _, doc = self.import_trace(self.files("eg"), "eg.trace.json")
        self.check_provenance(doc)
        self.assertIn("the execution graph has no times", " ".join(doc["provenance"]["not_in_source"]))
        for rank in range(WORLD):
            with self.subTest(rank=rank):
                self.assertEqual(self.observed(doc, rank), self.expected(rank))
                calls = doc["ranks"][rank]["calls"]
                self.assertTrue(all(c["origin"] == "execution_graph" and "start_us" not in c for c in calls))

    def test_linked_with_the_profiler(self):
        path, doc = self.import_trace(self.files("eg") + self.files("prof"), "linked.trace.json")
        self.check_provenance(doc)
        notes = doc["provenance"]["not_in_source"]
        self.assertNotIn("has no times", " ".join(notes))
        # PyTorch 1.13's profiler (no Kineto) now and then loses a gloo worker thread's event; such a
        # call keeps its shapes, has no times, and the provenance counts it. When no event is lost,
        # every call is linked.
        untimed_noted = sum(int(n.split()[0]) for n in notes if "have no profiler event" in n)
        untimed = 0
        for rank in range(WORLD):
            with self.subTest(rank=rank):
                self.assertEqual(self.observed(doc, rank), self.expected(rank))
                calls = doc["ranks"][rank]["calls"]
                with open(self.files("prof")[rank]) as f:
                    events = [e["name"] for e in json.load(f) if e["name"].startswith("gloo:")]
                backend = {"allreduce": "gloo:all_reduce", "allgather": "gloo:all_gather",
                           "broadcast": "gloo:broadcast", "alltoall": "gloo:all_to_all"}
                lost = sum(max(0, sum(1 for c in self.logs[rank] if backend[c["op"]] == name) - events.count(name))
                           for name in set(backend.values()))
                rank_untimed = 0
                for c in calls:
                    if c["origin"] == "linked":
                        self.assertGreaterEqual(c["duration_us"], 0)
                    else:
                        self.assertEqual(c["origin"], "execution_graph")
                        self.assertNotIn("start_us", c)
                        rank_untimed += 1
                self.assertGreaterEqual(rank_untimed, lost)
                if lost == 0:
                    self.assertEqual(rank_untimed, 0)
                untimed += rank_untimed
        self.assertEqual(untimed, untimed_noted)
        # trace show: each step's call count and the bytes per op, from the log by hand.
        p = subprocess.run([CCBENCH, "trace", "show", path], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        for step in sorted({c["step"] for c in self.logs[0]}):
            per_rank = [sum(1 for c in self.logs[r] if c["step"] == step) for r in range(WORLD)]
            low, high = min(per_rank), max(per_rank)
            self.assertIn(f"step {step}: {low if low == high else f'{low}-{high}'} calls per rank", p.stdout)
        sizes = {"float": 4, "double": 8, "int64": 8, "int32": 4}
        step1 = p.stdout[p.stdout.index("step 1:"):p.stdout.index("step 2:")]
        if WORLD > 2:  # ranks 2.. issue no call on the second group
            for r in range(WORLD):
                self.assertIn(f"rank {r}: {sum(1 for c in self.logs[r] if c['step'] == 1)} calls", step1)
        for op in ("allreduce", "allgather", "alltoall", "broadcast"):
            calls = [c for r in range(WORLD) for c in self.logs[r] if c["step"] == 1 and c["op"] == op]
            nbytes = sum(c["count"] * sizes[c["dtype"]] for c in calls)
            row = next(line.split() for line in step1.splitlines() if line.split()[:1] == [op])
            self.assertEqual(row[1:3], ["world", str(len(calls))])
            self.assertEqual(self.bytes_value(row[3]), nbytes)

    @staticmethod
    def bytes_value(text):
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)

    def test_a_rank_without_its_graph_is_refused(self):
        out = os.path.join(self.dir, "refused.json")
        with open(out, "w") as f:
            f.write("keep")
        p = subprocess.run([CCBENCH, "trace", "import", "pytorch-et", self.files("eg")[0], self.files("prof")[1],
                            "--out", out], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("prof_rank1.json", p.stderr)
        self.assertIn("no execution graph", p.stderr)
        with open(out) as f:
            self.assertEqual(f.read(), "keep")
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith(".refused")], [])


if __name__ == "__main__":
    unittest.main()
