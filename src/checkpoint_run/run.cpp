// `ccbench checkpoint` (docs/checkpoint.md): time to a durable checkpoint. The set-up's steps
// (setup.hpp) are agreed one by one; then rank 0 writes the header and every rank runs the trials
// (trials.hpp) under the sweep's watchdog, and the run finishes: the exit code agreed, this run's
// steps removed (without --keep), the result file finished. A hang, signal, failed peer or any
// other error after the set-up ends the rank through the frame's ending ladder, rows kept.
#include "checkpoint_run/run.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "checkpoint/step_dirs.hpp"
#include "checkpoint/target_facts.hpp"
#include "checkpoint_run/phases.hpp"
#include "checkpoint_run/rows.hpp"
#include "checkpoint_run/setup.hpp"
#include "checkpoint_run/tiered.hpp"
#include "checkpoint_run/trials.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"
#include "sweep/peer_table.hpp"
#include "sweep/result_writer.hpp"
#include "sweep/watchdog.hpp"

namespace ccbench::checkpoint_run {
namespace {

namespace fs = std::filesystem;
using namespace ccbench::checkpoint;

int usage(ControlChannel& ch, const std::string& message) {
  if (ch.is_root()) std::fprintf(stderr, "%s: %s\n", kCommand, message.c_str());
  return exit_code::usage;
}

std::string describe_plan(const ShardPlan& plan, const CheckpointOptions& opt, const Storage& storage) {
  return fmt::format("# checkpoint: {} writer(s) of {} ranks x {} = {} ({}), {}; target {} ({}), transfer {}, {}",
                     plan.writers, plan.ranks, format_bytes(plan.shard_bytes), format_bytes(plan.bytes()), plan.rule,
                     name(opt.layout), opt.target, storage.target_type(opt.target), format_bytes(opt.transfer_bytes),
                     storage.io_summary({.direct = opt.direct, .fsync = opt.fsync}));
}

// Rank 0, before the first trial: the plan, what an earlier run left behind, the table's header.
void print_start(const World& w, Storage& storage, const CheckpointOptions& opt, const ShardPlan& plan,
                 std::uint64_t ram, const std::vector<std::string>& stale_tier_notes) {
  std::printf("%s\n", describe_plan(plan, opt, storage).c_str());
  if (w.node_local) std::printf("# the target is node-local: each host's first rank commits its own step\n");
  // Partial steps exist only where a rename commits them.
  try {
    for (const auto& n : storage.commits_by_rename() ? storage.entries(opt.target) : std::vector<std::string>{})
      if (n.rfind(".step-", 0) == 0 && n.find(".partial-") != std::string::npos)
        std::printf("# note: %s is an uncommitted step of an earlier run (never a checkpoint; remove it)\n",
                    (fs::path(opt.target) / n).c_str());
  } catch (const StorageError& e) {
    std::printf("# note: uncommitted steps of earlier runs not looked for: %s\n", e.what());
  }
  for (const auto& note : stale_tier_notes) std::printf("%s\n", note.c_str());
  if (storage.local_cache() && ram > 0 && plan.shard_bytes * static_cast<std::uint64_t>(w.size) < ram)
    std::printf("# note: the shards of one host fit in its %.1f GiB of memory (page cache): reads need a cache drop\n",
                static_cast<double>(ram) / 1073741824.0);
  std::printf("%s\n", checkpoint_table_header().c_str());
  std::fflush(stdout);
}

}  // namespace

int run_checkpoint(ControlChannel& ch, RunEnding& ending, const RunConfig& config, const CheckpointOptions& opt,
                   const std::vector<std::string>& command) {
  std::unique_ptr<Storage> storage;
  std::string error;
  try {
    storage = open_storage(opt.target, opt.remote);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (auto failed = ch.agree_on_error(error)) return usage(ch, *failed);
  return run_on_storage(ch, ending, config, opt, *storage, command);
}

int run_on_storage(ControlChannel& ch, RunEnding& ending, const RunConfig& config, const CheckpointOptions& opt,
                   Storage& storage, const std::vector<std::string>& command, const SetupTuning& tuning) {
  World w = make_world(ch);
  // The set-up: every step agrees its errors (exit 2, nothing written).
  PlannedRun planned;
  std::string run_id;
  Limits limits;
  RestartStep restart;
  try {
    planned = plan_run(w, storage, opt);
    run_id = probe_target(w, storage, opt);
    check_free_space(w, storage, opt, planned.plan);
    check_step_room(w, storage, opt, config.trials);
    try {
      limits = throughput_limits(opt);
    } catch (const UsageError& e) {
      return usage(ch, e.what());  // the same on every rank: from the flags alone
    }
    if (!opt.write) restart = find_restart(w, storage, opt, planned.plan);
  } catch (const AgreedSetupError& e) {
    return usage(ch, e.what());
  }
  const ShardPlan& plan = planned.plan;

  const PeerTable peers = PeerTable::exchange(ch);
  const double mem_gbps = memory_gbps(ch, tuning.memory_copy_bytes);
  const std::uint64_t ram = host_memory_bytes();
  const std::string ram_json = ch.broadcast(nlohmann::json(ch.gather_to_root(std::to_string(ram))).dump());

  std::unique_ptr<ResultWriter> writer;
  std::string output_error;
  const CheckpointHeader header{
      plan,         opt,         config,           describe_target(opt.target), mem_gbps, w.node_local,
      limits.write, limits.read, storage.engine(), storage.settings()};
  if (ch.is_root()) {
    try {
      ResultFile file = checkpoint_header(header, ch.size(), w.hosts, nlohmann::json::parse(ram_json), command);
      writer = std::make_unique<ResultWriter>(file, config.json_path);
    } catch (const std::exception& e) {
      output_error = fmt::format("-J/--json {}: {}", config.json_path, e.what());
    }
  }
  if (const std::string e = ch.broadcast(output_error); !e.empty()) return usage(ch, e);

  // The set-up is over (it was watched since the flags); the trials have their own watchdog, whose
  // ending finishes the file. The ending forgets the writer and peer table before they go.
  ending.setup_done();
  ending.set_peers(&peers);
  ending.add_writer(writer.get());
  struct ForgetAtReturn {
    RunEnding& ending;
    ~ForgetAtReturn() { ending.forget(); }
  } forget_at_return{ending};
  Watchdog watchdog(config.timeout_s, [&](const Watchdog::Event& event) { ending.end(event); });
  watchdog.set_trial_offset(-1);  // the watchdog counts trials from 1; the table and rows from 0

  TrialContext context{
      w, config, opt, header, storage, watchdog, run_id, restart, writer.get(), planned.exporter.get(), nullptr, {}};
  // --tiered: the local tier is POSIX; the drain writes through the target's engine.
  std::unique_ptr<Storage> local_storage = opt.tiered.empty() ? nullptr : open_storage(opt.tiered);
  std::optional<ShardIo> local;
  if (local_storage) {
    local.emplace(ShardIo{w, opt, plan, *local_storage, plan.writer_index(w.rank)});
    context.local = &*local;
    std::string tier_error;
    try {
      if (local->writer >= 0) context.tier_dir = make_tier_dir(opt, run_id);
    } catch (const StorageError& e) {
      tier_error = fmt::format("--tiered {}: {}", opt.tiered, e.what());
    }
    if (auto failed = ch.agree_on_error(tier_error)) return usage(ch, *failed);
  }

  int exit = exit_code::ok;
  Trials trials(context);
  try {
    // A killed --tiered run's local copies (each host's first rank looks; rank 0 prints them).
    std::vector<std::string> stale_tier_notes;
    if (local_storage) {
      for (const auto& host_notes : ch.gather_to_root(ch.local_rank() == 0 ? stale_tier_dirs(opt, run_id) : ""))
        if (!host_notes.empty()) stale_tier_notes.push_back(host_notes);
    }
    if (ch.is_root()) print_start(w, storage, opt, plan, ram, stale_tier_notes);
    for (int trial = 0; trial < config.trials; ++trial)
      if (!trials.run(trial)) break;
    watchdog.disarm();
    exit = trials.agree_exit();
  } catch (const std::exception&) {
    ending.end_current_exception(watchdog.describe());
  }
  watchdog.disarm();
  std::error_code ec;
  if (!context.tier_dir.empty()) fs::remove(context.tier_dir, ec);  // empty once every shard drained; else kept
  trials.clean_up(exit);
  if (ch.is_root()) {
    const std::string status = exit == exit_code::usage ? "failed" : "complete";
    const std::string& final_error = trials.final_error();
    if (!final_error.empty()) std::fprintf(stderr, "%s: %s\n", kCommand, final_error.c_str());
    const bool saved = writer->finish(status, exit, final_error.empty() ? std::nullopt : std::optional(final_error));
    if (saved && !config.json_path.empty()) std::printf("# result file: %s\n", config.json_path.c_str());
  }
  std::fflush(stdout);
  return exit;
}

}  // namespace ccbench::checkpoint_run
