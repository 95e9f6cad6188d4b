#include "checkpoint_run/setup.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "checkpoint/step_dirs.hpp"
#include "checkpoint/step_store.hpp"
#include "checkpoint_run/tiered.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"
#include "model/workload.hpp"

namespace ccbench::checkpoint_run {

namespace fs = std::filesystem;
using namespace ccbench::checkpoint;

PlannedRun plan_run(World& w, Storage& storage, const CheckpointOptions& opt) {
  PlannedRun out;
  std::string error;
  try {
    check_tiered(opt);
    if (!opt.workload.empty()) {
      model::Workload wl;
      try {
        wl = model::load_workload(opt.workload);
      } catch (const ParseError& e) {
        throw UsageError(fmt::format("--workload: {}", e.what()));
      }
      out.plan = plan_from_workload(wl);
      if (out.plan.ranks != w.size) {
        throw UsageError(fmt::format("--workload {}: the workload has {} ranks (parallel.ranks) but {} were launched",
                                     opt.workload, out.plan.ranks, w.size));
      }
    } else {
      out.plan = plan_from_shard_bytes(opt.shard_bytes, w.size);
    }
    // What the engine cannot do is its to refuse, with the reason, before any request of a run.
    if (const std::string why = storage.refuses({.shared_file = opt.layout == CheckpointLayout::shared_file,
                                                 .direct = opt.direct,
                                                 .fsync = opt.fsync,
                                                 .export_to = !opt.export_to.empty(),
                                                 .shard_bytes = out.plan.shard_bytes});
        !why.empty())
      throw UsageError(why);
    if (w.ch.is_root() && !opt.export_to.empty()) out.exporter = s3::make_export_watch(opt.export_to, opt.remote);
    if (const std::string why = storage.unusable(opt.target); !why.empty()) {
      throw UsageError(fmt::format("--target {}: {}", opt.target, why));
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  agree_or_throw(w.ch, error);
  return out;
}

std::string probe_target(World& w, Storage& storage, const CheckpointOptions& opt) {
  ControlChannel& ch = w.ch;
  const std::string probe = (fs::path(opt.target) / fmt::format(".ccbench-probe-{}", ::getpid())).string();
  const std::string run_id = ch.broadcast(fmt::format("{}", ::getpid()));
  if (ch.is_root() && !storage.one_namespace()) std::ofstream(probe).put('\n');
  ch.barrier();
  std::error_code ec;
  const bool sees = fs::exists(fmt::format("{}/.ccbench-probe-{}", opt.target, run_id), ec);
  w.node_local = !storage.one_namespace() && ch.max_all(sees ? 0.0 : 1.0) > 0;
  ch.barrier();
  if (ch.is_root()) fs::remove(probe, ec);
  w.leader = w.node_local ? ch.local_rank() == 0 : w.rank == 0;
  return run_id;
}

void check_free_space(World& w, Storage& storage, const CheckpointOptions& opt, const ShardPlan& plan) {
  std::string space_error;
  const std::optional<std::uint64_t> free_bytes =
      w.leader && opt.write ? storage.free_bytes(opt.target) : std::nullopt;  // none: nothing to check
  if (free_bytes) {
    std::uint64_t here = 0;  // bytes this leader's mount receives
    for (int r = 0; r < w.size; ++r) {
      if (!plan.writes(r)) continue;
      if (!w.node_local || w.hosts[static_cast<std::size_t>(r)] == w.hosts[static_cast<std::size_t>(w.rank)])
        here += plan.shard_bytes;
    }
    const std::uint64_t free = *free_bytes;
    const std::uint64_t need = here + here / 100 + (1ULL << 20);  // 1% and 1 MiB for metadata
    if (free < need) {
      space_error = fmt::format("--target {}: {} free, the checkpoint needs {} (nothing written)", opt.target,
                                format_bytes(free), format_bytes(need));
    }
  }
  agree_or_throw(w.ch, space_error);
  if (!opt.tiered.empty()) {
    std::string tier_error;
    if (w.ch.local_rank() == 0) tier_error = tier_space_error(opt, plan, w.hosts, w.rank);
    agree_or_throw(w.ch, tier_error);
  }
}

void check_step_room(World& w, Storage& storage, const CheckpointOptions& opt, int trials) {
  if (!opt.write || storage.remote_listing()) return;
  std::string steps_error;
  if (w.ch.is_root()) {
    try {
      const int last = last_step(storage.entries(opt.target));
      if (steps_left(last) < trials)
        steps_error = fmt::format(
            "--target {}: {} is the highest step and step numbers end at {}: no room for {} "
            "trial(s) (remove or rename the old steps)",
            opt.target, step_name(last), step_name(kMaxStep), trials);
    } catch (const StorageError& e) {
      steps_error = fmt::format("--target {}: {}", opt.target, e.what());
    }
  }
  agree_or_throw(w.ch, steps_error);
}

Limits throughput_limits(const CheckpointOptions& opt) {
  Limits out;
  if (!opt.fsx_deployment.empty()) {
    out.write = fsx_limit(fsx_table(), opt.fsx_deployment, opt.fsx_per_tib, opt.fsx_capacity_tib, Direction::write);
    out.read = fsx_limit(fsx_table(), opt.fsx_deployment, opt.fsx_per_tib, opt.fsx_capacity_tib, Direction::read);
  } else if (opt.tier_gbps) {
    out.write = ThroughputLimit{*opt.tier_gbps, *opt.tier_gbps, fmt::format("--tier-gbps {}", *opt.tier_gbps)};
    // The read ceiling is its own figure (W,R); the options default it to the write one.
    const double read_gbps = opt.tier_read_gbps.value_or(*opt.tier_gbps);
    out.read = ThroughputLimit{read_gbps, read_gbps, fmt::format("--tier-gbps read {}", read_gbps)};
  }
  return out;
}

namespace {

// The newest committed step under `target` and how it was written (its manifest, read through the
// engine and every field checked), checked against the plan. Folders whose manifest is not
// ccbench's are passed over. Throws UsageError naming --phases read and the manifest's field.
RestartStep newest_restart_step(Storage& storage, const std::string& target, const ShardPlan& plan) {
  std::optional<StepEntry> found;
  try {
    found = newest_step(storage, target);
  } catch (const StorageError& e) {
    throw UsageError(fmt::format("--phases read: {}", e.what()));
  }
  if (!found) throw UsageError(fmt::format("--phases read: no committed step under {}", target));
  const StepEntry& newest = *found;
  if (!newest.manifest) throw UsageError(fmt::format("--phases read: {}", newest.problem));
  RestartStep out;
  out.path = newest.path;
  out.name = fs::path(out.path).filename().string();
  out.trial = newest.manifest->trial;
  out.seed = newest.manifest->seed;
  const auto shard = newest.manifest->shard_bytes;
  const auto writers = newest.manifest->shards;
  if (shard != plan.shard_bytes || writers != static_cast<std::size_t>(plan.writers)) {
    throw UsageError(fmt::format("--phases read: {} holds {} shards of {} bytes, this plan {} of {}", out.path, writers,
                                 shard, plan.writers, plan.shard_bytes));
  }
  return out;
}

}  // namespace

RestartStep find_restart(World& w, Storage& storage, const CheckpointOptions& opt, const ShardPlan& plan) {
  ControlChannel& ch = w.ch;
  RestartStep restart;
  std::string step_error;
  if (ch.is_root()) {
    try {
      restart = newest_restart_step(storage, opt.target, plan);
    } catch (const UsageError& e) {
      step_error = e.what();
    }
  }
  agree_or_throw(ch, step_error);
  restart.path = ch.broadcast(restart.path);
  restart.name = ch.broadcast(restart.name);
  restart.trial = ch.broadcast(restart.trial);
  restart.seed = static_cast<std::uint32_t>(ch.broadcast(static_cast<double>(restart.seed)));
  return restart;
}

}  // namespace ccbench::checkpoint_run
