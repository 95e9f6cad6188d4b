#!/usr/bin/python3
"""A small real training job (PyTorch 1.13, CPU, gloo) that writes, per rank, the execution-graph
observer's JSON (eg_rankR.json), the profiler's chrome trace (prof_rankR.json) and its own log of the
collective calls it made (calls_rankR.json: op, dtype, count, group, step, in order).

Usage: torch_job.py OUT_DIR WORLD_SIZE PORT

Each step trains a DistributedDataParallel model (small bucket cap: several gradient buckets,
all-reduced by a comm hook that logs each bucket), then issues a broadcast, an all_gather, an
all_reduce and an all_to_all_single on the world and an all_reduce on a second process group
(dist.new_group). The traces start after DDP's construction and two warm-up steps, so DDP's start-up
broadcasts and its bucket rebuild (C++ calls this script cannot log) are outside the traced window."""
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ExecutionGraphObserver

STEPS = 2
WARMUP_STEPS = 2
DTYPE_NAMES = {torch.float32: "float", torch.float64: "double", torch.int64: "int64", torch.int32: "int32"}


class CallLog:
    def __init__(self):
        self.calls = []
        self.step = None
        self.recording = False

    def add(self, op, tensor, group, **extra):
        if self.recording:
            entry = {"op": op, "dtype": DTYPE_NAMES[tensor.dtype], "count": tensor.numel(), "group": group,
                     "step": self.step}
            entry.update(extra)
            self.calls.append(entry)


def work(rank, world, out_dir, port):
    torch.set_num_threads(1)  # two workers on a shared 2-core machine
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(1234)
    log = CallLog()
    pair = dist.new_group([0, 1])  # the second process group

    model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 640),
                                torch.nn.ReLU(), torch.nn.Linear(640, 8))
    # DDP's first bucket holds up to 1 MB (1.13's default first-bucket cap) and the rest 0.25 MB:
    # 1.5 MB of gradients make several buckets per step.
    ddp = DDP(model, bucket_cap_mb=0.25)

    def logged_allreduce(state, bucket):
        buffer = bucket.buffer()
        log.add("allreduce", buffer, "world", redop="sum")
        buffer.div_(world)
        return dist.all_reduce(buffer, async_op=True).get_future().then(lambda f: f.value()[0])

    ddp.register_comm_hook(None, logged_allreduce)
    optimiser = torch.optim.SGD(ddp.parameters(), lr=0.01)
    data = torch.randn(16, 64)
    target = torch.randn(16, 8)

    def step():
        optimiser.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(data), target)
        loss.backward()
        optimiser.step()
        flag = torch.arange(16, dtype=torch.int64)
        log.add("broadcast", flag, "world", root=0)
        dist.broadcast(flag, src=0)
        mine = torch.full((24,), float(rank))
        gathered = [torch.zeros(24) for _ in range(world)]
        log.add("allgather", mine, "world")
        dist.all_gather(gathered, mine)
        stats = torch.ones(40, dtype=torch.float64)
        log.add("allreduce", stats, "world", redop="sum")
        dist.all_reduce(stats)
        routed_in = torch.arange(8 * world, dtype=torch.float32)
        routed_out = torch.zeros(8 * world)
        log.add("alltoall", routed_in, "world")
        dist.all_to_all_single(routed_out, routed_in)
        if rank in (0, 1):
            pair_sum = torch.ones(12)
            log.add("allreduce", pair_sum, "pair", redop="sum")
            dist.all_reduce(pair_sum, group=pair)

    for _ in range(WARMUP_STEPS):
        step()
    observer = ExecutionGraphObserver()
    observer.register_callback(os.path.join(out_dir, f"eg_rank{rank}.json"))
    observer.start()
    log.recording = True
    # With a schedule, profiler.step() marks each step ("ProfilerStep#N", which the execution graph
    # records too); the trace is exported when the schedule's active steps end.
    prof_path = os.path.join(out_dir, f"prof_rank{rank}.json")
    with torch.profiler.profile(schedule=torch.profiler.schedule(wait=0, warmup=0, active=STEPS, repeat=1),
                                on_trace_ready=lambda p: p.export_chrome_trace(prof_path)) as profiler:
        for i in range(STEPS):
            log.step = i
            step()
            profiler.step()
    log.recording = False
    observer.stop()
    observer.unregister_callback()
    with open(os.path.join(out_dir, f"calls_rank{rank}.json"), "w") as f:
        json.dump({"rank": rank, "world": world, "groups": {"world": list(range(world)), "pair": [0, 1]},
                   "calls": log.calls}, f)
    dist.barrier()
    # Every file is written and closed, and both ranks are past their last collective. gloo's
    # teardown (destroy_process_group, or the interpreter's exit with its threads) hung now and then
    # in 1 of 8 runs on this machine, so each worker ends here.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    torch.set_num_threads(1)
    mp.spawn(work, args=(int(sys.argv[2]), sys.argv[1], int(sys.argv[3])), nprocs=int(sys.argv[2]))
