// The set-up of `ccbench checkpoint` (docs/checkpoint.md), as named steps run in this order before the
// first trial. Each is collective and agrees its error: a step that fails on any rank throws
// AgreedSetupError (sweep/channel.hpp) with the one-line message on every rank (exit 2, nothing
// written), so no rank goes on alone.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "checkpoint/plausibility.hpp"
#include "checkpoint/s3/export_watch.hpp"
#include "checkpoint/shard_plan.hpp"
#include "checkpoint/storage.hpp"
#include "checkpoint_run/options.hpp"
#include "checkpoint_run/phases.hpp"
#include "sweep/run_config.hpp"

namespace ccbench::checkpoint_run {

// The shard plan (from --shard-bytes or --workload) and the engine's refusals, --tiered's checks
// and the target's usability; on rank 0 with --export-to, the export's watch.
struct PlannedRun {
  checkpoint::ShardPlan plan;
  std::unique_ptr<checkpoint::s3::ExportWatch> exporter;
};
PlannedRun plan_run(World& w, checkpoint::Storage& storage, const CheckpointOptions& opt);

// Shared or node-local: rank 0 makes a probe file that every rank looks for (an engine with one
// namespace needs none). Sets w.node_local and w.leader; returns the run's id (rank 0's pid).
std::string probe_target(World& w, checkpoint::Storage& storage, const CheckpointOptions& opt);

// Free space: the new step must fit before anything is written (each leader checks its mount);
// with --tiered, each host's local copies must fit on its local tier too.
void check_free_space(World& w, checkpoint::Storage& storage, const CheckpointOptions& opt,
                      const checkpoint::ShardPlan& plan);

// Step numbers have six digits: a run that would need step-1000000 is refused before writing
// (where listing is a remote request, each trial's claim checks it instead, under the watchdog).
void check_step_room(World& w, checkpoint::Storage& storage, const CheckpointOptions& opt, int trials);

// The write and read ceilings the plausibility check uses (--fsx-*, --tier-gbps); none without
// them. Every rank computes the same from the flags; throws UsageError naming the flag.
struct Limits {
  std::optional<checkpoint::ThroughputLimit> write, read;
};
Limits throughput_limits(const CheckpointOptions& opt);

// --phases read: the newest committed step, read as a restart would (its manifest says how it was
// written; a plan that does not match it is refused). Rank 0 looks; every rank gets the answer.
struct RestartStep {
  std::string path, name;
  int trial = 0;
  std::uint32_t seed = 0;
};
RestartStep find_restart(World& w, checkpoint::Storage& storage, const CheckpointOptions& opt,
                         const checkpoint::ShardPlan& plan);

}  // namespace ccbench::checkpoint_run
