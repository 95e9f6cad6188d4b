// Time to durable and throughput of one checkpoint phase from every rank's phase times
// (docs/method.md, "Checkpoints"). Pure arithmetic: the command measures, this decides.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace ccbench::checkpoint {

// One rank's phase of one trial. start_s and end_s are seconds since the barrier that began the
// phase (each rank's own clock, read right after the barrier returned); the others are durations.
struct RankPhases {
  int rank = 0;
  std::string host;
  bool writes = true;  // false: this rank holds no shard (the other data-parallel replicas)
  double start_s = 0;  // before open
  double open_s = 0;
  double io_s = 0;     // write (or read) of every transfer
  double fsync_s = 0;  // 0 for reads and --no-fsync
  double close_s = 0;
  double end_s = 0;  // after close
  std::uint64_t bytes = 0;
  std::uint64_t retries = 0;  // requests sent again after a transient failure (S3)
};

struct PhaseTiming {
  double ranks_s = 0;            // last writing rank's end - first writing rank's start
  double commit_s = 0;           // rank 0's commit (manifest, rename, parent fsync); 0 for reads
  double time_to_durable_s = 0;  // ranks_s + commit_s
  double throughput_gbps = 0;    // bytes / time_to_durable_s, 1e9 bytes per second
  int slowest_rank = -1;         // the writing rank with the longest end - start
  std::string slowest_host;
  double slowest_s = 0;
  double median_rank_s = 0;  // median of the writing ranks' end - start
  double tail_ratio = 0;     // slowest_s / median_rank_s (1 = no straggler)
};

// Throws std::invalid_argument when no rank writes or a time is negative or not finite.
PhaseTiming time_to_durable(std::span<const RankPhases> ranks, double commit_s, std::uint64_t bytes);

}  // namespace ccbench::checkpoint
