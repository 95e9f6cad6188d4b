#include "checkpoint/config_price.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "checkpoint/shard_plan.hpp"
#include "core/error.hpp"

namespace ccbench::checkpoint {
namespace {

// Nodes that hold a checkpoint's writers when the job runs on `nodes` nodes: every node for ZeRO-3 /
// FSDP; otherwise one data-parallel replica, tp consecutive ranks per pipeline stage.
int writer_nodes(const ShardPlan& plan, const model::Workload& w, int nodes) {
  if (plan.every_rank_writes) return nodes;
  const int per_stage = (w.tp + w.ranks_per_node - 1) / w.ranks_per_node;
  return std::min(nodes, per_stage * w.pp);
}

}  // namespace

PricedConfig price_config(const JobInputs& in, const std::string& text, const std::string& tier, const JobNode& node) {
  PricedConfig c;
  c.text = text;
  c.profile = node.instance_type;
  c.tier = tier;
  const ShardPlan plan = plan_from_workload(in.workload);
  c.checkpoint_bytes = plan.bytes();
  c.writer_nodes = writer_nodes(plan, in.workload, in.nodes);
  TierQuery q;
  q.tier = parse_tier(c.tier, "--config");
  q.checkpoint_bytes = c.checkpoint_bytes;
  q.writer_nodes = c.writer_nodes;
  q.node_network_gbps = node.efa_gbps / 8.0;  // Gbit/s -> GB/s
  q.write_within_s = in.write_within_s;
  q.keep = in.keep;
  q.s3_part_bytes = in.part_bytes;
  c.rates = tier_rates(q);

  const double bytes = static_cast<double>(c.checkpoint_bytes);
  // Time = bytes / rate: the optimistic rate (hi) gives the short end of the band.
  const auto time_s = [bytes](const Rate& r) {
    return Band{bytes / (r.value_gbps * 1e9), bytes / (r.hi_gbps * 1e9), bytes / (r.lo_gbps * 1e9)};
  };
  c.durable_s = time_s(c.rates.write);
  if (c.rates.blocking) {
    // A measured tiered run: training waits for the local tier, the target copy follows.
    if (in.async_gbps_per_node > 0)
      throw UsageError(
          fmt::format("--async-gbps-per-node: the tiered rows of '{}' measure the blocking time already", c.tier));
    c.blocking_s = time_s(*c.rates.blocking);
  } else if (in.async_gbps_per_node > 0) {
    // Training waits for the copy off the GPUs only; the write to the tier follows behind it.
    const double copy = bytes / c.writer_nodes / (in.async_gbps_per_node * 1e9);
    c.blocking_s = {copy, copy, copy};
    c.durable_s = {copy + c.durable_s.value, copy + c.durable_s.lo, copy + c.durable_s.hi};
  } else {
    c.blocking_s = c.durable_s;
  }
  const Band read = time_s(c.rates.read);
  c.restart_s = {in.restart_s + read.value, in.restart_s + read.lo, in.restart_s + read.hi};
  c.job_mtbf_s = in.node_mtbf_hours * 3600.0 / in.nodes;
  const double m = c.job_mtbf_s;
  c.young_s = {model::young_interval_s(c.blocking_s.value, m), model::young_interval_s(c.blocking_s.lo, m),
               model::young_interval_s(c.blocking_s.hi, m)};
  c.daly_s = {model::daly_interval_s(c.blocking_s.value, m), model::daly_interval_s(c.blocking_s.lo, m),
              model::daly_interval_s(c.blocking_s.hi, m)};
  // Each end at its own optimum interval: a job that checkpoints faster also checkpoints more often.
  c.cost = model::job_cost(c.daly_s.value, c.blocking_s.value, c.restart_s.value, m);
  c.goodput = {c.cost.goodput, model::job_cost(c.daly_s.hi, c.blocking_s.hi, c.restart_s.hi, m).goodput,
               model::job_cost(c.daly_s.lo, c.blocking_s.lo, c.restart_s.lo, m).goodput};
  return c;
}

}  // namespace ccbench::checkpoint
