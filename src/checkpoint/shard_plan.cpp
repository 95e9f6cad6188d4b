#include "checkpoint/shard_plan.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "model/workload.hpp"

namespace ccbench::checkpoint {
namespace {

std::uint64_t round_up(std::uint64_t bytes, std::uint64_t to) { return (bytes + to - 1) / to * to; }

// Whether `shard` bytes on each of `ranks` ranks stay within kMaxCheckpointBytes (so every product
// of a shard with a rank or writer count, and the free-space figure with its margin, fits).
bool fits(std::uint64_t shard, int ranks) {
  return ranks > 0 && shard <= kMaxCheckpointBytes / static_cast<std::uint64_t>(ranks);
}

}  // namespace

int ShardPlan::writer_index(int rank) const {
  if (rank < 0 || rank >= ranks) return -1;
  if (every_rank_writes) return rank;
  // Rank order: tp fastest, then dp, then pp (as model/workload.hpp). Replica 0 writes.
  const int tp_index = rank % tp;
  const int dp_index = (rank / tp) % dp;
  const int pp_index = rank / (tp * dp);
  if (dp_index != 0) return -1;
  return tp_index + tp * pp_index;
}

ShardPlan plan_from_shard_bytes(std::uint64_t shard_bytes, int ranks) {
  if (shard_bytes == 0 || shard_bytes % kShardAlignBytes != 0) {
    throw UsageError(fmt::format("--shard-bytes: {} is not a positive multiple of 4 KiB (4096 bytes)", shard_bytes));
  }
  if (!fits(shard_bytes, ranks)) {
    throw UsageError(fmt::format(
        "--shard-bytes: {} bytes x {} ranks is above the largest checkpoint, 2^62 bytes (4 EiB)", shard_bytes, ranks));
  }
  ShardPlan plan;
  plan.ranks = ranks;
  plan.writers = ranks;
  plan.dp = ranks;
  plan.shard_bytes = shard_bytes;
  plan.model_bytes = shard_bytes * static_cast<std::uint64_t>(ranks);
  plan.rule = fmt::format("--shard-bytes: every rank writes one shard ({} ranks)", ranks);
  return plan;
}

ShardPlan plan_from_workload(const model::Workload& w) {
  ShardPlan plan;
  plan.ranks = w.ranks;
  plan.tp = w.tp;
  plan.pp = w.pp;
  plan.dp = w.dp;
  const double bytes = std::ceil(w.parameters * w.checkpoint_bytes_per_parameter);
  if (!(bytes < 1.8e19)) throw UsageError(fmt::format("--workload {}: the checkpoint exceeds 2^64 bytes", w.source));
  plan.model_bytes = static_cast<std::uint64_t>(bytes);
  const bool sharded = w.sharding == model::Sharding::zero3 || w.sharding == model::Sharding::fsdp;
  plan.every_rank_writes = sharded;
  plan.writers = sharded ? w.ranks : w.tp * w.pp;
  plan.shard_bytes = round_up((plan.model_bytes + plan.writers - 1) / plan.writers, kShardAlignBytes);
  if (!fits(plan.shard_bytes, w.ranks)) {
    throw UsageError(
        fmt::format("--workload {}: a shard of {} bytes x {} ranks (parallel.ranks) is above the largest "
                    "checkpoint, 2^62 bytes (4 EiB)",
                    w.source, plan.shard_bytes, w.ranks));
  }
  plan.rule = sharded ? fmt::format("{}: every rank writes 1/{} of the checkpoint", model::name(w.sharding), w.ranks)
                      : fmt::format("one data-parallel replica writes: tp {} x pp {} = {} ranks of {} (dp {})", w.tp,
                                    w.pp, plan.writers, w.ranks, w.dp);
  return plan;
}

}  // namespace ccbench::checkpoint
