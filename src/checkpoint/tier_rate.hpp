// The aggregate rate a checkpoint is written (and read back at a restart) on a storage tier at the
// scale of a job, for `ccbench model checkpoint`: from spec (FSx for Lustre's per-TiB table,
// configs/storage/fsx-lustre.yaml; S3's per-prefix request rates, configs/storage/s3-limits.yaml), or
// measured (result files of `ccbench checkpoint`, scaled per node and capped by the tier's spec),
// always bounded by the writing nodes' network. docs/model.md, "What checkpoints cost a job".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace ccbench::checkpoint {

// A rate in GB/s (10^9 bytes a second) and its band: lo the pessimistic end, hi the optimistic one.
struct Rate {
  double value_gbps = 0, lo_gbps = 0, hi_gbps = 0;
};

struct S3Limits {
  double put_per_s_per_prefix = 0;
  double get_per_s_per_prefix = 0;
};
// The compiled-in configs/storage/s3-limits.yaml.
const S3Limits& s3_limits();

struct FsxCapacitySteps {
  double smallest_tib = 0, step_tib = 0;
};
// The compiled-in configs/storage/fsx-lustre.yaml's capacity_tib.
const FsxCapacitySteps& fsx_capacity_steps();
// The smallest capacity FSx offers that is at least `tib`.
double fsx_round_capacity_tib(double tib);

// One storage tier as `--config PROFILE@TIER` names it: "fsx:PERSISTENT_2-250[:CAPACITY_TIB]",
// "s3[:PREFIXES]", "measured:FILE", or a measured file and a spec that caps it,
// "measured:FILE,fsx:PERSISTENT_2-250:67.2".
struct TierSpec {
  std::string text;
  std::optional<std::string> fsx_deployment;
  double fsx_per_tib = 0;
  double fsx_capacity_tib = 0;  // 0: sized by the write target
  int s3_prefixes = 0;          // > 0: S3 from spec
  std::vector<std::string> measured_files;
};
// Throws UsageError naming `flag` and the part it cannot read.
TierSpec parse_tier(const std::string& text, const std::string& flag);

// Per-node rates of `ccbench checkpoint` result files: each trial's aggregate GB/s (rows
// checkpoint_write / checkpoint_read: bytes over time_us.median, which busbw_gbps must agree with)
// over the file's node count; value = median, band = min..max.
struct MeasuredRate {
  Rate write_per_node;
  std::optional<Rate> read_per_node;
  // `--tiered` rows (blocking_us): bytes / blocking per node, the local tier's rate. write_per_node
  // is then the rate to durable on the target.
  std::optional<Rate> blocking_per_node;
  int trials = 0;
  std::string source;                 // "2 trials on 2 nodes (FILE)"
  std::vector<std::string> warnings;  // rows flagged "not durable?" (plausibility), one line a file
};
// Throws ParseError naming the file (and the row and field) when it holds no checkpoint_write row, a
// write row that is not durable (--no-fsync), a row whose busbw_gbps contradicts its bytes and time,
// or a system.nodes that is not 1..2^24.
MeasuredRate measured_rate(const std::vector<ResultFile>& files);

struct TierQuery {
  TierSpec tier;
  std::uint64_t checkpoint_bytes = 0;
  int writer_nodes = 0;
  double node_network_gbps = 0;  // GB/s a node's network carries (the instance profile)
  double write_within_s = 0;     // sizes an FSx file system given no capacity (0: none given)
  int keep = 2;                  // checkpoints the file system holds (its capacity covers them)
  std::uint64_t s3_part_bytes = 64ULL << 20;
};

struct TierRates {
  Rate write, read;
  // Measured tiered runs: the local tier's rate at the writing nodes (each node its own local
  // tier: not capped by the target's spec). Absent: training is blocked until durable.
  std::optional<Rate> blocking;
  double capacity_tib = 0;            // FSx: given or sized; 0 otherwise
  std::string limited_by;             // what bounds the write's value
  std::string read_from;              // where the restart's read rate comes from
  std::vector<std::string> warnings;  // measured files: MeasuredRate::warnings
};
// Throws UsageError naming --write-within when an FSx tier has no capacity and no target.
TierRates tier_rates(const TierQuery& q);

}  // namespace ccbench::checkpoint
