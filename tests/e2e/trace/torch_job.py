#!/usr/bin/python3
"""A small real training job (PyTorch 1.13, CPU, gloo) that writes, per rank, the execution-graph
observer's JSON (eg_rankR.json), the profiler's chrome trace (prof_rankR.json) and its own log of the
collective calls it made (calls_rankR.json: op, dtype, count, group, step, in order).

Usage: torch_job.py OUT_DIR WORLD_SIZE PORT

Traced from DDP's construction on, so DDP's own collectives are in the traces:
- step 0: DistributedDataParallel's constructor (its parameter checks and parameter broadcast);
- steps 1 and 2: a training step each. DDP all-reduces several gradient buckets (small bucket cap)
  through a comm hook that logs each bucket; before step 2's forward it rebuilds its buckets
  (two broadcasts of the bucket layout). A hand-made FSDP-like layer loop all_gathers each layer's
  weight shards and all-reduces its full gradient (gloo in 1.13 has no reduce_scatter); then a
  broadcast, an all_to_all_single and an all_reduce on a second process group (dist.new_group).

DDP's start-up and rebuild collectives are C++ calls: the job logs them from the Python entry points
that issue them (dist._verify_params_across_processes, dist._broadcast_coalesced, and DDP's
_has_rebuilt_buckets turning true in a forward), with the calls and sizes 1.13's reducer.cpp and
comm.cpp issue there."""
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ExecutionGraphObserver

TRAIN_STEPS = 2
DTYPE_NAMES = {torch.float32: "float", torch.float64: "double", torch.int64: "int64", torch.int32: "int32"}
FSDP_LAYERS = [(32, 48), (48, 16)]  # (in, out) of each layer of the FSDP-like loop


class CallLog:
    def __init__(self):
        self.calls = []
        self.step = None

    def add(self, op, dtype, count, group, **extra):
        entry = {"op": op, "dtype": DTYPE_NAMES[dtype], "count": count, "group": group, "step": self.step}
        entry.update(extra)
        self.calls.append(entry)

    def tensor(self, op, tensor, group, **extra):
        self.add(op, tensor.dtype, tensor.numel(), group, **extra)


def log_ddp_internals(log):
    """Wraps the Python entry points through which DDP issues its own C++ collectives."""
    verify = dist._verify_params_across_processes
    broadcast_coalesced = dist._broadcast_coalesced

    def logged_verify(process_group, tensors, logger=None):
        # 1.13's verify_params_across_processes (reducer.cpp) all_gathers the parameter count (one
        # int64), then broadcasts from rank 0 each parameter's sizes and strides (int64, 2 per
        # dimension), which every rank checks against its own.
        log.add("allgather", torch.int64, 1, "world")
        log.add("broadcast", torch.int64, sum(2 * t.dim() for t in tensors), "world", root=0)
        return verify(process_group, tensors, logger)

    def logged_broadcast_coalesced(process_group, tensors, buffer_size, src=0):
        # broadcast_coalesced flattens tensors of one type into buffers of up to buffer_size bytes
        # and broadcasts each buffer: here one type, less than one buffer.
        nbytes = sum(t.numel() * t.element_size() for t in tensors)
        assert len({t.dtype for t in tensors}) == 1 and nbytes <= buffer_size, "the log assumes one buffer"
        log.add("broadcast", tensors[0].dtype, sum(t.numel() for t in tensors), "world", root=src)
        return broadcast_coalesced(process_group, tensors, buffer_size, src)

    dist._verify_params_across_processes = logged_verify
    dist._broadcast_coalesced = logged_broadcast_coalesced


def work(rank, world, out_dir, port):
    torch.set_num_threads(1)  # the workers share a 2-core machine
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(1234 + rank)  # DDP's broadcast makes the replicas equal
    log = CallLog()
    log_ddp_internals(log)
    pair = dist.new_group([0, 1])  # the second process group (every rank must create it)

    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 8))
    # FSDP-like: each rank holds 1/world of each layer's weight, flat.
    shards = []
    for fan_in, fan_out in FSDP_LAYERS:
        assert (fan_in * fan_out) % world == 0
        shards.append(torch.nn.Parameter(torch.randn(fan_in * fan_out // world) * 0.1))
    data = torch.randn(16, 64)
    target = torch.randn(16, 8)
    fsdp_data = torch.randn(16, FSDP_LAYERS[0][0])

    observer = ExecutionGraphObserver()
    observer.register_callback(os.path.join(out_dir, f"eg_rank{rank}.json"))
    observer.start()
    # With a schedule, profiler.step() marks each step ("ProfilerStep#N", which the execution graph
    # records too); the trace is exported when the schedule's active steps end.
    prof_path = os.path.join(out_dir, f"prof_rank{rank}.json")
    with torch.profiler.profile(schedule=torch.profiler.schedule(wait=0, warmup=0, active=1 + TRAIN_STEPS, repeat=1),
                                on_trace_ready=lambda p: p.export_chrome_trace(prof_path)) as profiler:
        log.step = 0
        # DDP reduces every gradient in one bucket in the first step (1.13 buckets by size only once
        # it knows the order gradients are ready in) and rebuilds its buckets before the second: a
        # first bucket of 8 KiB and then 15 KiB each make 4 buckets of the model's 4 64x64 layers.
        dist._DEFAULT_FIRST_BUCKET_BYTES = 8 * 1024
        ddp = DDP(model, bucket_cap_mb=15 / 1024)

        def logged_allreduce(state, bucket):
            buffer = bucket.buffer()
            log.tensor("allreduce", buffer, "world", redop="sum")
            buffer.div_(world)
            return dist.all_reduce(buffer, async_op=True).get_future().then(lambda f: f.value()[0])

        ddp.register_comm_hook(None, logged_allreduce)
        optimiser = torch.optim.SGD(list(ddp.parameters()) + shards, lr=0.01)
        profiler.step()

        for step in range(1, 1 + TRAIN_STEPS):
            log.step = step
            optimiser.zero_grad()
            rebuilt_before = ddp._has_rebuilt_buckets
            output = ddp(data)
            rebuilt = ddp._has_rebuilt_buckets and not rebuilt_before
            if rebuilt:
                # The reducer's rebuild (sync_bucket_indices in reducer.cpp) broadcasts from rank 0 the
                # parameter indices of every bucket and the bucket count (int32, one tensor), then the
                # parameter count of each bucket (int32): one per bucket the backward below reduces.
                log.add("broadcast", torch.int32, sum(1 for _ in ddp.parameters()) + 1, "world", root=0)
                log.add("broadcast", torch.int32, 0, "world", root=0)
                bucket_sizes_call, first_bucket = log.calls[-1], len(log.calls)
            torch.nn.functional.mse_loss(output, target).backward()
            if rebuilt:
                bucket_sizes_call["count"] = len(log.calls) - first_bucket

            # The FSDP-like layer loop: gather each layer's weight, and after the backward all-reduce
            # its gradient (the average), of which each rank keeps its shard.
            x = fsdp_data
            full_weights = []
            for (fan_in, fan_out), shard in zip(FSDP_LAYERS, shards):
                pieces = [torch.empty_like(shard) for _ in range(world)]
                log.tensor("allgather", shard, "world")
                dist.all_gather(pieces, shard.detach())
                weight = torch.cat(pieces).view(fan_out, fan_in).requires_grad_()
                full_weights.append(weight)
                x = torch.relu(torch.nn.functional.linear(x, weight))
            x.square().mean().backward()
            for weight, shard in reversed(list(zip(full_weights, shards))):
                grad = weight.grad.flatten()
                log.tensor("allreduce", grad, "world", redop="sum")
                dist.all_reduce(grad)
                shard.grad = grad.view(world, -1)[rank] / world
            optimiser.step()

            flag = torch.arange(16, dtype=torch.int64)
            log.tensor("broadcast", flag, "world", root=0)
            dist.broadcast(flag, src=0)
            stats = torch.ones(40, dtype=torch.float64)
            log.tensor("allreduce", stats, "world", redop="sum")
            dist.all_reduce(stats)
            routed_in = torch.arange(8 * world, dtype=torch.float32)
            routed_out = torch.zeros(8 * world)
            log.tensor("alltoall", routed_in, "world")
            dist.all_to_all_single(routed_out, routed_in)
            if rank in (0, 1):
                pair_sum = torch.ones(12)
                log.tensor("allreduce", pair_sum, "pair", redop="sum")
                dist.all_reduce(pair_sum, group=pair)
            profiler.step()
    observer.stop()
    observer.unregister_callback()
    with open(os.path.join(out_dir, f"calls_rank{rank}.json"), "w") as f:
        json.dump({"rank": rank, "world": world, "groups": {"world": list(range(world)), "pair": [0, 1]},
                   "calls": log.calls}, f)
    dist.barrier()
    # Every file is written and closed, and every rank is past its last collective. gloo's
    # teardown (destroy_process_group, or the interpreter's exit with its threads) hung now and then
    # in 1 of 8 runs on this machine, so each worker ends here.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    torch.set_num_threads(1)
    mp.spawn(work, args=(int(sys.argv[2]), sys.argv[1], int(sys.argv[3])), nprocs=int(sys.argv[2]))
