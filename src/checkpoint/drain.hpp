// The drain of a tiered checkpoint (`ccbench checkpoint --tiered LOCAL_PATH`, docs/checkpoint.md
// "Tiered checkpoints"): a shard already on the local tier is copied to the target through the
// Storage interface on both sides, so any engine (POSIX, S3) is a drain target. No MPI: the command
// owns the ranks and the commit. The rank runs it as soon as its local copy is done: in a training
// job the drain overlaps the next steps; here nothing else runs, so no thread would change its times.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "checkpoint/storage.hpp"

namespace ccbench::checkpoint {

struct DrainJob {
  Storage* from = nullptr;  // the local tier
  std::string from_path;
  Storage* to = nullptr;  // the target
  std::string to_path;
  std::uint64_t bytes = 0;
  std::uint64_t transfer_bytes = 16ULL << 20;
  bool direct = false;  // O_DIRECT on both sides where the filesystems take it
  bool fsync = true;    // the target copy's sync (durable)
};

// Times in seconds since `t0` (the barrier that began the trial) and per call.
struct DrainTimes {
  double start_s = 0, open_s = 0, io_s = 0, fsync_s = 0, close_s = 0, end_s = 0;
  bool direct = false;
  std::string error;  // a StorageError's text: the trial failed
};

// Copies job.from_path to job.to_path (read a transfer, write it at the same offset; sync; close).
DrainTimes drain(const DrainJob& job, std::chrono::steady_clock::time_point t0);

}  // namespace ccbench::checkpoint
