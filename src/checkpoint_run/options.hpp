// `ccbench checkpoint`'s options once parsed (cli/checkpoint_options parses the flags; docs/checkpoint.md):
// the target and its tier, the shard plan, the I/O and the phases.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "checkpoint/storage.hpp"

namespace ccbench::checkpoint_run {

inline constexpr const char* kCommand = "ccbench checkpoint";

enum class CheckpointLayout { file_per_rank, shared_file };

struct CheckpointOptions {
  std::string target;
  std::uint64_t shard_bytes = 0;  // --shard-bytes (0: from --workload)
  std::string workload;           // --workload FILE
  CheckpointLayout layout = CheckpointLayout::file_per_rank;
  std::uint64_t transfer_bytes = 16ULL << 20;
  bool direct = false;
  bool fsync = true;                     // --no-fsync clears it
  bool write = true, read = true;        // --phases (read alone: the newest committed step, as a restart)
  int keep = 0;                          // --keep K (0: this run's steps are removed at its end)
  std::string tier;                      // --tier nvme|fsx|... (free text, recorded)
  std::optional<double> tier_gbps;       // --tier-gbps W[,R]: the stated tier's write ceiling
  std::optional<double> tier_read_gbps;  // ... and read ceiling (default: the write one)
  std::string fsx_deployment;            // --fsx-deployment SCRATCH_2|PERSISTENT_2
  double fsx_per_tib = 0;                // --fsx-throughput-per-tib
  double fsx_capacity_tib = 0;           // --fsx-capacity-tib
  checkpoint::RemoteOptions remote;      // --part-size, --concurrency, --s3-endpoint (s3:// targets)
  std::string export_to;                 // --export-to s3://BUCKET/PREFIX: wait for the DRA's export
  double export_deadline_s = 0;          // --export-deadline (default: 300 s, under -T)
  std::string tiered;                    // --tiered LOCAL_PATH: written there first, drained to --target behind
};

std::string_view name(CheckpointLayout layout);

}  // namespace ccbench::checkpoint_run
