// What checkpoints cost a training job on one configuration (`ccbench model checkpoint`, docs/model.md
// "What checkpoints cost a job"): the tier's rates for the job's checkpoint (tier_rate), the
// blocking time, time to durable and restart as bands, Young's and Daly's intervals at the job's
// MTBF and the goodput at Daly's (model/checkpoint_cost). The command reads the flags and prints.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/tier_rate.hpp"
#include "model/checkpoint_cost.hpp"
#include "model/workload.hpp"

namespace ccbench::checkpoint {

// The job and its failure rate, as the flags give them.
struct JobInputs {
  model::Workload workload;
  int nodes = 0;
  double node_mtbf_hours = 0;
  double write_within_s = 0;
  int keep = 2;
  double restart_s = 0;
  double async_gbps_per_node = 0;  // 0: the checkpoint blocks training until it is durable
  std::uint64_t part_bytes = 64ULL << 20;
};

// A value with its band at the pessimistic (hi for a time) and optimistic ends.
struct Band {
  double value = 0, lo = 0, hi = 0;
};

// The node the job runs on: its instance type and its network (Gbit/s), from the instance profile.
struct JobNode {
  std::string instance_type;
  double efa_gbps = 0;
};

// One configuration (PROFILE@TIER) priced.
struct PricedConfig {
  std::string text, profile, tier;
  std::uint64_t checkpoint_bytes = 0;
  int writer_nodes = 0;
  TierRates rates;
  Band blocking_s, durable_s, restart_s, young_s, daly_s, goodput;
  model::JobCost cost;  // at the value of every input
  double job_mtbf_s = 0;
};

// `text` is the configuration as given, `tier` its TIER part. Throws UsageError naming --config for
// a tier it cannot price or --async-gbps-per-node with a measured tiered tier, and
// std::invalid_argument when the formulas cannot compute (a job that never finishes a segment).
PricedConfig price_config(const JobInputs& in, const std::string& text, const std::string& tier, const JobNode& node);

}  // namespace ccbench::checkpoint
