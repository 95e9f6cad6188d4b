// Which ranks write how many bytes of a checkpoint: from --shard-bytes (every rank one shard) or from
// a workload file (parameters x bytes per parameter, split by its parallelism). The formulas are in
// docs/checkpoint.md ("Shards"); the unit test checks them against MLPerf Storage's table.
#pragma once

#include <cstdint>
#include <string>

namespace ccbench::model {
struct Workload;
}

namespace ccbench::checkpoint {

// Every shard is a whole number of these (O_DIRECT needs block-aligned lengths and offsets).
inline constexpr std::uint64_t kShardAlignBytes = 4096;
// The most bytes a checkpoint plan holds, counted as shard x launched ranks: 2^62 (4 EiB). Below
// int64's 2^63 - 1 (file offsets, result files) with room for the free-space check's margin, so no
// product of a shard with ranks or writers wraps (2^63 x 2 ranks wrapped to 0 and passed that check).
inline constexpr std::uint64_t kMaxCheckpointBytes = 1ULL << 62;

struct ShardPlan {
  std::uint64_t model_bytes = 0;  // parameters x bytes per parameter (= shard x writers for --shard-bytes)
  std::uint64_t shard_bytes = 0;  // what each writing rank writes: model_bytes / writers, rounded up to 4 KiB
  int ranks = 0;                  // ranks in the job
  int writers = 0;                // ranks that write a shard
  int tp = 1, pp = 1, dp = 1;     // the layout writers() follows (tp fastest, then dp, then pp)
  bool every_rank_writes = true;  // ZeRO-3 / FSDP / --shard-bytes; otherwise one data-parallel replica
  std::string rule;               // one line for the console and the result file

  // Bytes the checkpoint writes: shard_bytes x writers (model_bytes rounded up per shard).
  std::uint64_t bytes() const { return shard_bytes * static_cast<std::uint64_t>(writers); }
  // This rank's index among the writers (0..writers-1), or -1 when it writes nothing.
  int writer_index(int rank) const;
  bool writes(int rank) const { return writer_index(rank) >= 0; }
};

// --shard-bytes: every one of `ranks` ranks writes `shard_bytes` (a multiple of 4 KiB, checked by the
// caller). Throws UsageError naming --shard-bytes when it is not, or when shard x ranks is above
// kMaxCheckpointBytes.
ShardPlan plan_from_shard_bytes(std::uint64_t shard_bytes, int ranks);

// --workload: the checkpoint of `w` (parameters x w.checkpoint_bytes_per_parameter). ZeRO-3 / FSDP:
// every rank writes 1/ranks; otherwise (DDP, ZeRO-1/2, TP x PP with DP replicas) one data-parallel
// replica writes, tp x pp ranks of 1/(tp x pp) each, as MLPerf Storage's checkpointing does.
// Throws UsageError naming the file when a shard x ranks is above kMaxCheckpointBytes.
ShardPlan plan_from_workload(const model::Workload& w);

}  // namespace ccbench::checkpoint
