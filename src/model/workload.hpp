// A job's shape (configs/workloads/*.yaml) and the collectives it issues: one training step, or for
// a serving workload (`serving:`) one request's prefill, KV-cache transfer and decode step. The
// arithmetic is documented with its formulas in docs/model.md, sections "Planning a training step"
// and "Planning a serving step".
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/enums.hpp"
#include "core/moe_router.hpp"

namespace ccbench::model {

// How data-parallel replicas keep parameters and gradients in step.
enum class Sharding : std::uint8_t {
  none,   // DDP: gradients all-reduced in buckets
  zero1,  // optimizer state sharded: gradients all-reduced, updated parameters all-gathered
  zero2,  // + gradients sharded: reduce-scatter per micro-batch, parameters all-gathered after the step
  zero3,  // + parameters sharded: per layer, all-gather before use, reduce-scatter of gradients
  fsdp,   // PyTorch FSDP full/hybrid shard: the same traffic as zero3 (shard_group < dp: hybrid)
};
std::string_view name(Sharding s);
std::optional<Sharding> parse_sharding(std::string_view text);

// A serving workload's request shape and placement (`serving:` keys). `parallel:` is the decode
// instance's layout (dp: its replicas); the prefill's layout defaults to it.
struct Serving {
  int batch = 0;                  // sequences one decode step advances, per decode replica
  int prompt_tokens = 0;          // tokens of one request's prompt (its prefill)
  int generated_tokens = 0;       // decode steps one request waits for
  double kv_bytes_per_token = 0;  // the KV cache one token leaves, all layers together
  double percentile = 99;         // the decode step's calls priced at this percentile (0: the median)
  bool disaggregated = false;     // prefill on ranks of its own: the KV cache moves to the decode ranks
  int prefill_batch = 1;          // prompts prefilled together
  int prefill_tp = 1, prefill_pp = 1, prefill_ep = 1;
};

struct Workload {
  std::string name;
  std::string source;  // the file it came from (messages)

  double parameters = 0;  // total parameter count P
  int layers = 0;         // transformer layers L
  int hidden = 0;         // hidden size h
  // Mixture of experts (experts == 0: a dense model).
  int experts = 0;
  int top_k = 0;
  double expert_parameters = 0;  // parameters of all experts together (P_e); the rest is dense
  int moe_layers = 0;            // layers with an expert block (default: every layer)
  // `model.moe.routing` (uniform | zipf:S | hot:E:FRACTION) and `model.moe.seed`: the router of
  // `run --moe` over the ep ranks, one micro-batch's tokens per rank. Absent: an even all-to-all.
  std::optional<MoeSpec> routing;
  std::uint32_t routing_seed = 1;  // run's default --seed

  DType dtype = DType::bfloat16;       // parameters and activations
  DType grad_dtype = DType::bfloat16;  // gradient reductions (default: dtype)
  int sequence_length = 0;
  int micro_batch = 0;    // sequences per micro-batch per data-parallel rank
  int micro_batches = 1;  // micro-batches per step (gradient accumulation)

  int ranks = 0;
  int ranks_per_node = 0;
  int tp = 1, pp = 1, dp = 1, ep = 1;
  Sharding sharding = Sharding::none;
  int shard_group = 0;  // FSDP/ZeRO-3 shard group size (0: dp, i.e. full shard)
  std::uint64_t bucket_bytes = 25ULL << 20;
  // Checkpoint bytes per parameter (`checkpoint.bytes_per_parameter`): bf16 weights (2) plus the fp32
  // master copy, Adam m and v (4 + 4 + 4) by default. Read by `ccbench checkpoint` only.
  double checkpoint_bytes_per_parameter = 14.0;
  // A serving workload (docs/model.md "Planning a serving step"); absent: a training job.
  std::optional<Serving> serving;

  int nodes() const { return ranks / ranks_per_node; }
};

// Parses and checks a workload file. Throws ParseError "FILE:LINE: ..." naming the key: unknown or
// missing keys, bad values, and impossible layouts (tp x pp x dp != ranks, ep not dividing dp, ...).
Workload load_workload(const std::filesystem::path& path);
Workload parse_workload(const std::string& yaml_text, const std::string& source);

// The collective set of ops a step uses; sendrecv (pipeline stages) is priced from `run --op sendrecv`'s curve.
// moe_dispatch and moe_combine: a routed expert exchange (model.moe.routing), priced at the most
// loaded rank's off-rank bytes.
enum class StepOp : std::uint8_t {
  allreduce,
  allgather,
  reduce_scatter,
  alltoall,
  sendrecv,
  moe_dispatch,
  moe_combine
};
std::string_view name(StepOp op);
Op to_op(StepOp op);

// What part of the job a collective is on the critical path of: a training step, or a serving
// request's prefill, KV-cache transfer and each of its decode steps.
enum class Phase : std::uint8_t { step, prefill, kv_transfer, decode };
std::string_view name(Phase phase);

// One kind of collective call in a training step, as one rank sees it.
struct StepCollective {
  std::string what;  // "FSDP all-gather of parameters, per layer" ...
  StepOp op = StepOp::allreduce;
  std::uint64_t bytes = 0;  // S per call, nccl-tests' size: the all-reduce buffer, the all-gather output,
                            // the reduce-scatter input, the all-to-all send buffer
  int group = 0;            // ranks in the communicator
  int nodes = 0;            // nodes those ranks span
  std::uint64_t count = 0;  // calls per step
  bool overlaps = false;    // issued while compute runs (prefetch, backward hooks)
  // moe_dispatch, moe_combine: the most loaded rank's off-rank bytes L (what the model prices) and
  // L over the mean off-rank bytes a rank sends (1: even).
  std::uint64_t most_loaded_bytes = 0;
  double off_rank_imbalance = 0;
  Phase phase = Phase::step;
  double percentile = 0;   // the statistic its calls are priced at: 0 the median, else that percentile
  double per_request = 1;  // times the phase recurs in one request (a decode step: generated_tokens)

  int ranks_per_node() const { return nodes > 0 ? (group + nodes - 1) / nodes : 0; }
};

// The collectives of one training step (docs/model.md "Planning a training step"), or of a serving
// workload's prefill, KV transfer and decode step, in that order ("Planning a serving step").
std::vector<StepCollective> step_collectives(const Workload& w);

// Nodes spanned by the group {i * stride : 0 <= i < size} when ranks fill nodes in order,
// ranks_per_node at a time (rank order: tp fastest, then dp, then pp).
int nodes_spanned(int size, int stride, int ranks_per_node);

}  // namespace ccbench::model
