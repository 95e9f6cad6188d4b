// `ccbench checkpoint --tiered LOCAL_PATH` (docs/checkpoint.md, "Tiered checkpoints"): its checks,
// where a rank's local copy lives, and the fields a tiered trial adds to its checkpoint_write row
// (`blocking_us`, the local tier's time; `durable_us`, until the target copy is committed). The
// drain itself is checkpoint/drain.
#pragma once

#include <string>
#include <vector>

#include "checkpoint/durable_time.hpp"
#include "checkpoint/shard_plan.hpp"
#include "checkpoint_run/options.hpp"
#include "checkpoint_run/rows.hpp"

namespace ccbench::checkpoint_run {

// Throws UsageError naming --tiered: not a writable directory, the --target itself or a folder
// inside it, without the
// write phase, with --layout shared-file. Nothing when --tiered is not given.
void check_tiered(const CheckpointOptions& opt);

// "" when this rank's host's local copies fit on the local tier (1% and 1 MiB to spare, as for
// --target), else the one-line error naming --tiered. Called by each host's first rank.
std::string tier_space_error(const CheckpointOptions& opt, const checkpoint::ShardPlan& plan,
                             const std::vector<std::string>& hosts, int rank);

// Console notes naming LOCAL_PATH/.ccbench-tier-* folders of earlier runs (a killed run's local
// copies), one line each; "" when none. Nothing is removed: another run may be using them.
std::string stale_tier_dirs(const CheckpointOptions& opt, const std::string& run_id);

// The run's folder on the local tier (LOCAL_PATH/.ccbench-tier-<run id>), made if missing (every
// rank of a host may call it). Throws StorageError.
std::string make_tier_dir(const CheckpointOptions& opt, const std::string& run_id);

// Adds `blocking_us` (last writer's local copy done - first writer's start), `durable_us` (the
// row's time to durable: the drains and the commit) and `checkpoint.tiered` (the local path, every
// writer's `local_end_s`) to the trial's checkpoint_write row, and a console line.
void add_tiered_fields(PhaseRows& rows, const std::string& local_path, const std::vector<checkpoint::RankPhases>& ranks,
                       const std::vector<std::string>& local_end_s);

}  // namespace ccbench::checkpoint_run
