// `ccbench checkpoint` (docs/checkpoint.md): time to a durable checkpoint. Every writing rank writes
// its shard (open, write every transfer, fsync, close, each timed) after a barrier, then rank 0 (or
// each host's first rank, when the target is node-local) commits the step: a manifest, the rename
// of the partial step directory into place and an fsync of the parent. After a cache drop (the
// first rung of the ladder that works, recorded) every shard is read back and verified. The pure
// parts are src/checkpoint/; this file runs them over the control channel in the measuring frame
// (measure/frame.hpp) with the sweep's watchdog, result writer and the frame's ending ladder.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "checkpoint/drain.hpp"
#include "checkpoint/durable_time.hpp"
#include "checkpoint/plausibility.hpp"
#include "checkpoint/s3/export_watch.hpp"
#include "checkpoint/shard_data.hpp"
#include "checkpoint/shard_plan.hpp"
#include "checkpoint/step_dirs.hpp"
#include "checkpoint/step_store.hpp"
#include "checkpoint/storage.hpp"
#include "checkpoint/target_facts.hpp"
#include "cli/checkpoint_export.hpp"
#include "cli/checkpoint_options.hpp"
#include "cli/checkpoint_rows.hpp"
#include "cli/checkpoint_tiered.hpp"
#include "cli/measuring_commands.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"
#include "model/workload.hpp"
#include "measure/frame.hpp"
#include "sweep/channel.hpp"
#include "sweep/peer_table.hpp"
#include "sweep/rank_hosts.hpp"
#include "sweep/result_writer.hpp"
#include "sweep/watchdog.hpp"

namespace ccbench::cli {
namespace {

namespace fs = std::filesystem;
using namespace ccbench::checkpoint;
using Clock = std::chrono::steady_clock;

constexpr const char* kCommand = "ccbench checkpoint";

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The rungs of the cache-drop ladder, weakest last: the phase's method is the weakest any rank got.
// `remote`: an object store, read over the network with no local cache to drop.
enum class CacheDrop : int { o_direct, remote, drop_caches, fadvise, other_node, warm };
constexpr const char* kCacheDropNames[] = {"o_direct", "remote", "drop_caches", "fadvise", "other_node", "warm"};

struct World {
  explicit World(ControlChannel& channel) : ch(channel) {}
  ControlChannel& ch;
  int rank = 0;
  int size = 1;
  std::vector<std::string> hosts;  // every rank's host, on every rank
  int nodes = 1;
  bool leader = false;      // commits on this rank's host (rank 0, or the first rank of a host when node-local)
  bool node_local = false;  // the target is not one directory seen by every rank
};

// The data of a rank that holds no shard (never read: it writes nothing).
const ShardData& no_shard() {
  static const ShardData none(0, 0, 0, 4096, 4096);
  return none;
}

// One rank's phase of a trial (write or read) and what went wrong in it.
struct PhaseRun {
  RankPhases times;
  std::string error;     // a storage error: the trial failed
  std::string mismatch;  // a shard read back wrong
  std::string direct_refused;
  bool direct = false;
};

std::string phases_json(const PhaseRun& r) {
  const RankPhases& t = r.times;
  return nlohmann::json{{"rank", t.rank},     {"host", t.host},   {"writes", t.writes},   {"start_s", t.start_s},
                        {"open_s", t.open_s}, {"io_s", t.io_s},   {"fsync_s", t.fsync_s}, {"close_s", t.close_s},
                        {"end_s", t.end_s},   {"bytes", t.bytes}, {"direct", r.direct},   {"retries", t.retries}}
      .dump();
}

RankPhases phases_from_json(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  RankPhases t;
  t.rank = j["rank"];
  t.host = j["host"];
  t.writes = j["writes"];
  t.start_s = j["start_s"];
  t.open_s = j["open_s"];
  t.io_s = j["io_s"];
  t.fsync_s = j["fsync_s"];
  t.close_s = j["close_s"];
  t.end_s = j["end_s"];
  t.bytes = j["bytes"];
  t.retries = j["retries"];
  return t;
}

struct Run {
  World& w;
  const RunConfig& config;
  const CheckpointOptions& opt;
  const ShardPlan& plan;
  Storage& storage;
  Watchdog& watchdog;
  std::string run_id;
  int writer = -1;  // this rank's writer index

  std::string file_of(const std::string& dir, int writer_index) const {
    return (fs::path(dir) /
            (opt.layout == CheckpointLayout::shared_file ? std::string(kSharedFileName) : shard_name(writer_index)))
        .string();
  }
  std::uint64_t offset_of(int writer_index) const {
    return opt.layout == CheckpointLayout::shared_file ? plan.shard_bytes * static_cast<std::uint64_t>(writer_index)
                                                       : 0;
  }

  // Writes (or reads and verifies) this rank's shard in `dir`; the times are since `t0`.
  // A phase of this rank, before any I/O: who it is and whether it holds a shard.
  PhaseRun begin_phase() const {
    PhaseRun r;
    r.times.rank = w.rank;
    r.times.host = w.hosts[static_cast<std::size_t>(w.rank)];
    r.times.writes = writer >= 0;
    return r;
  }

  // Opens a shard file, recording the open's time and whether O_DIRECT held (or was refused).
  std::unique_ptr<StorageFile> open_timed(const std::string& path, OpenFor mode, PhaseRun& r) {
    const auto t = Clock::now();
    auto file = storage.open(path, mode, {.direct = opt.direct});
    r.direct = file->direct();
    r.direct_refused = file->direct_refused();
    r.times.open_s = seconds_since(t);
    return file;
  }

  PhaseRun write_shard(const std::string& dir, const ShardData& data, Clock::time_point t0) {
    PhaseRun r = begin_phase();
    if (writer < 0) return r;
    const std::string path = file_of(dir, writer);
    const std::uint64_t base = offset_of(writer);
    try {
      r.times.start_s = seconds_since(t0);
      const OpenFor mode =
          opt.layout == CheckpointLayout::shared_file ? OpenFor::write_existing : OpenFor::create_write;
      auto file = open_timed(path, mode, r);
      auto t = Clock::now();
      for (std::uint64_t off = 0; off < plan.shard_bytes; off += opt.transfer_bytes) {
        const std::size_t n = static_cast<std::size_t>(std::min(opt.transfer_bytes, plan.shard_bytes - off));
        file->write_at(data.at(off, n).data(), n, base + off);
      }
      r.times.io_s = seconds_since(t);
      if (opt.fsync) {
        t = Clock::now();
        file->sync();
        r.times.fsync_s = seconds_since(t);
      }
      t = Clock::now();
      file->close();
      r.times.close_s = seconds_since(t);
      r.times.end_s = seconds_since(t0);
      r.times.bytes = plan.shard_bytes;
      r.times.retries = file->retries();
    } catch (const StorageError& e) {
      r.error = e.what();
    }
    return r;
  }

  PhaseRun read_shard(const std::string& dir, int shard_writer, const ShardData& data, Clock::time_point t0) {
    PhaseRun r = begin_phase();
    if (writer < 0) return r;
    const std::string path = file_of(dir, shard_writer);
    const std::uint64_t base = offset_of(shard_writer);
    double verify_s = 0;
    try {
      AlignedBuffer buffer = AlignedBuffer::allocate(static_cast<std::size_t>(opt.transfer_bytes));
      r.times.start_s = seconds_since(t0);
      auto file = open_timed(path, OpenFor::read, r);
      auto t = Clock::now();
      for (std::uint64_t off = 0; off < plan.shard_bytes; off += opt.transfer_bytes) {
        const std::size_t n = static_cast<std::size_t>(std::min(opt.transfer_bytes, plan.shard_bytes - off));
        file->read_at(buffer.get(), n, base + off);
        // Verification is not storage time: it is measured and taken out of the phase.
        const auto v = Clock::now();
        if (r.mismatch.empty()) {
          if (const auto bad = data.first_mismatch(off, {buffer.get(), n})) {
            r.mismatch = fmt::format("rank {}: {} at offset {}: the shard read back wrong (shard of rank {})", w.rank,
                                     path, base + *bad, shard_writer);
          }
        }
        verify_s += seconds_since(v);
      }
      r.times.io_s = seconds_since(t) - verify_s;
      t = Clock::now();
      file->close();
      r.times.close_s = seconds_since(t);
      r.times.end_s = seconds_since(t0) - verify_s;
      r.times.bytes = plan.shard_bytes;
      r.times.retries = file->retries();
    } catch (const StorageError& e) {
      r.error = e.what();
    }
    return r;
  }
};

// --tiered: the shard goes to the local tier first (what training waits for), then drains to the
// target right after (docs/checkpoint.md, "Tiered checkpoints"). The phase's start is
// the local write's, its I/O times and end the drain's; `local_end_s` when the local copy was done.
PhaseRun tiered_write(Run& run, Run& local, const std::string& tier_dir, const std::string& partial,
                      const ShardData& data, Clock::time_point t0, double& local_end_s) {
  PhaseRun r = local.write_shard(tier_dir, data, t0);
  local_end_s = r.times.end_s;
  if (run.writer < 0) return r;
  const std::string local_file = local.file_of(tier_dir, run.writer);
  if (!r.error.empty()) {
    std::error_code ec;
    fs::remove(local_file, ec);  // the failed local copy (the trial fails; the tier is left clean)
    return r;
  }
  const DrainTimes d = drain({&local.storage, local_file, &run.storage, run.file_of(partial, run.writer),
                              run.plan.shard_bytes, run.opt.transfer_bytes, run.opt.direct, run.opt.fsync},
                             t0);
  r.error = d.error;
  r.direct = r.direct && d.direct;
  r.times.open_s = d.open_s;
  r.times.io_s = d.io_s;
  r.times.fsync_s = d.fsync_s;
  r.times.close_s = d.close_s;
  r.times.end_s = d.end_s;
  try {
    local.storage.remove_tree(local_file);  // drained: the local tier keeps no copy past the trial
  } catch (const StorageError& e) {
    if (r.error.empty()) r.error = e.what();
  }
  return r;
}

// The hosts' memory-copy bandwidth, GB/s summed over ranks copying at once (the plausibility
// bound for a tier that is really the page cache). Before the first trial, outside any timing.
double memory_gbps(ControlChannel& ch) {
  constexpr std::size_t kBytes = 32ULL << 20;
  AlignedBuffer a = AlignedBuffer::allocate(kBytes), b = AlignedBuffer::allocate(kBytes);
  std::memset(a.get(), 1, kBytes);
  std::memset(b.get(), 2, kBytes);
  ch.barrier();
  const auto t0 = Clock::now();
  for (int i = 0; i < 4; ++i) std::memcpy(b.get(), a.get(), kBytes);
  const double slowest = ch.max_all(seconds_since(t0));
  return slowest > 0 ? 4.0 * kBytes * ch.size() / slowest / 1e9 : 0.0;
}

// The first rung of the cache-drop ladder that works for this rank's shard; the weakest over ranks.
CacheDrop drop_cache(World& w, Storage& storage, const std::string& file, bool reads_direct, bool& other_node) {
  int mine = static_cast<int>(CacheDrop::warm);
  other_node = false;
  if (reads_direct) {
    mine = static_cast<int>(CacheDrop::o_direct);
  } else {
    bool dropped = false;
    if (w.ch.local_rank() == 0 && ::geteuid() == 0) {
      ::sync();
      std::ofstream out("/proc/sys/vm/drop_caches");
      out << "1\n";
      out.flush();
      dropped = static_cast<bool>(out);
    }
    dropped = w.ch.max_all(dropped ? 1.0 : 0.0) > 0;
    w.ch.barrier();
    const Eviction e = file.empty() ? Eviction{true, "fadvise", ""} : storage.evict(file);
    if (e.evicted)
      mine = static_cast<int>(dropped ? CacheDrop::drop_caches : CacheDrop::fadvise);
    else if (w.nodes > 1 && !w.node_local) {
      other_node = true;  // IOR's -C: read a shard this node's cache never held
      mine = static_cast<int>(CacheDrop::other_node);
    }
  }
  return static_cast<CacheDrop>(static_cast<int>(w.ch.max_all(mine)));
}

std::string describe_plan(const ShardPlan& plan, const CheckpointOptions& opt, const Storage& storage) {
  return fmt::format("# checkpoint: {} writer(s) of {} ranks x {} = {} ({}), {}; target {} ({}), transfer {}, {}",
                     plan.writers, plan.ranks, format_bytes(plan.shard_bytes), format_bytes(plan.bytes()), plan.rule,
                     name(opt.layout), opt.target, storage.target_type(opt.target), format_bytes(opt.transfer_bytes),
                     storage.io_summary({.direct = opt.direct, .fsync = opt.fsync}));
}

struct ReadOnlyStep {
  std::string path, name;
  int trial = 0;
  std::uint32_t seed = 0;
};

// The newest committed step under `target` and how it was written (its manifest, read through the
// engine and every field checked), checked against the plan. Folders whose manifest is not
// ccbench's are passed over. Throws UsageError naming --phases read and the manifest's field.
ReadOnlyStep find_restart_step(Storage& storage, const std::string& target, const ShardPlan& plan) {
  std::optional<StepEntry> found;
  try {
    found = newest_step(storage, target);
  } catch (const StorageError& e) {
    throw UsageError(fmt::format("--phases read: {}", e.what()));
  }
  if (!found) throw UsageError(fmt::format("--phases read: no committed step under {}", target));
  const StepEntry& newest = *found;
  if (!newest.manifest) throw UsageError(fmt::format("--phases read: {}", newest.problem));
  ReadOnlyStep out;
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

// Removes committed steps through the engine (only the files their manifests list; the engine may
// refuse a step, S3 one this run did not claim) and says what went or was kept on this leader's
// stdout. `find` lists them (a listing that fails is said too): never an error of the run.
void remove_steps(const std::function<std::vector<CommittedStep>(std::vector<std::string>&)>& find, Storage& storage,
                  const char* why) {
  Removal done;
  try {
    std::vector<std::string> unreadable;
    done = remove_steps(storage, find(unreadable));
    done.kept.insert(done.kept.end(), unreadable.begin(), unreadable.end());
  } catch (const StorageError& e) {
    done.kept.push_back(fmt::format("steps not removed ({}): {}", why, e.what()));
  }
  for (const auto& left : done.kept) std::printf("# note: %s\n", left.c_str());
  if (!done.removed.empty())
    std::printf("# removed %s (%s)\n", fmt::format("{}", fmt::join(done.removed, ", ")).c_str(), why);
  std::fflush(stdout);
}

// Removes a failed trial's partial step; "" when it went, else what is left and why (a dead S3
// server cannot list it: the failure that ended the trial must still be the one reported).
std::string remove_partial(Storage& storage, const std::string& partial) {
  try {
    storage.remove_tree(partial);
    return "";
  } catch (const StorageError& e) {
    return fmt::format("NOT removed ({})", e.what());
  }
}

// Set up, trials, ending. Every channel object is gone before the caller's MPI_Finalize.
int run_checkpoint(ControlChannel& ch, RunEnding& ending, int argc, char** argv, RunConfig& config,
                   CheckpointOptions& opt) {
  World w(ch);
  w.rank = ch.rank();
  w.size = ch.size();
  const auto usage = [&](const std::string& message) {
    if (ch.is_root()) std::fprintf(stderr, "%s: %s\n", kCommand, message.c_str());
    return exit_code::usage;
  };
  w.hosts = every_rank_hostname(ch);
  {
    std::vector<std::string> seen;
    for (const auto& h : w.hosts)
      if (std::find(seen.begin(), seen.end(), h) == seen.end()) seen.push_back(h);
    w.nodes = static_cast<int>(seen.size());
  }

  // Set-up errors are agreed on: every rank checks what it can see (its own mount of the target).
  std::unique_ptr<Storage> storage;
  std::unique_ptr<s3::ExportWatch> exporter;  // rank 0, with --export-to
  ShardPlan plan;
  std::string error;
  try {
    storage = open_storage(opt.target, opt.remote);
    check_tiered(opt);
    if (!opt.workload.empty()) {
      model::Workload wl;
      try {
        wl = model::load_workload(opt.workload);
      } catch (const ParseError& e) {
        throw UsageError(fmt::format("--workload: {}", e.what()));
      }
      plan = plan_from_workload(wl);
      if (plan.ranks != w.size) {
        throw UsageError(fmt::format("--workload {}: the workload has {} ranks (parallel.ranks) but {} were launched",
                                     opt.workload, plan.ranks, w.size));
      }
    } else {
      plan = plan_from_shard_bytes(opt.shard_bytes, w.size);
    }
    // What the engine cannot do is its to refuse, with the reason, before any request of a run.
    if (const std::string why = storage->refuses({.shared_file = opt.layout == CheckpointLayout::shared_file,
                                                  .direct = opt.direct,
                                                  .fsync = opt.fsync,
                                                  .export_to = !opt.export_to.empty(),
                                                  .shard_bytes = plan.shard_bytes});
        !why.empty())
      throw UsageError(why);
    if (ch.is_root() && !opt.export_to.empty()) exporter = s3::make_export_watch(opt.export_to, opt.remote);
    if (const std::string why = storage->unusable(opt.target); !why.empty()) {
      throw UsageError(fmt::format("--target {}: {}", opt.target, why));
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (auto failed = ch.agree_on_error(error)) return usage(*failed);

  // Shared or node-local: rank 0 makes a probe file that every rank looks for (an engine with one
  // namespace, an object store, needs none).
  const std::string probe = (fs::path(opt.target) / fmt::format(".ccbench-probe-{}", ::getpid())).string();
  std::string run_id = fmt::format("{}", ::getpid());
  run_id = ch.broadcast(run_id);
  if (ch.is_root() && !storage->one_namespace()) std::ofstream(probe).put('\n');
  ch.barrier();
  std::error_code ec;
  const bool sees = fs::exists(fmt::format("{}/.ccbench-probe-{}", opt.target, run_id), ec);
  w.node_local = !storage->one_namespace() && ch.max_all(sees ? 0.0 : 1.0) > 0;
  ch.barrier();
  if (ch.is_root()) fs::remove(probe, ec);
  w.leader = w.node_local ? ch.local_rank() == 0 : w.rank == 0;

  // Free space: the new step must fit before anything is written (each leader checks its mount).
  {
    std::string space_error;
    const std::optional<std::uint64_t> free_bytes =
        w.leader && opt.write ? storage->free_bytes(opt.target) : std::nullopt;  // none: nothing to check
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
    if (auto failed = ch.agree_on_error(space_error)) return usage(*failed);
  }
  // --tiered: each host's local copies must fit on its local tier too (each host's first rank).
  if (!opt.tiered.empty()) {
    std::string space_error;
    if (ch.local_rank() == 0) space_error = tier_space_error(opt, plan, w.hosts, w.rank);
    if (auto failed = ch.agree_on_error(space_error)) return usage(*failed);
  }
  // Step numbers have six digits: a run that would need step-1000000 is refused before writing.
  // (Where listing is a remote request, steps are claimed one by one in the trial loop, under the
  // watchdog.)
  if (opt.write && !storage->remote_listing()) {
    std::string steps_error;
    if (ch.is_root()) {
      try {
        const int last = last_step(storage->entries(opt.target));
        if (steps_left(last) < config.trials)
          steps_error = fmt::format(
              "--target {}: {} is the highest step and step numbers end at {}: no room for {} "
              "trial(s) (remove or rename the old steps)",
              opt.target, step_name(last), step_name(kMaxStep), config.trials);
      } catch (const StorageError& e) {
        steps_error = fmt::format("--target {}: {}", opt.target, e.what());
      }
    }
    if (auto failed = ch.agree_on_error(steps_error)) return usage(*failed);
  }
  std::optional<ThroughputLimit> write_limit, read_limit;
  try {
    if (!opt.fsx_deployment.empty()) {
      write_limit = fsx_limit(fsx_table(), opt.fsx_deployment, opt.fsx_per_tib, opt.fsx_capacity_tib, Direction::write);
      read_limit = fsx_limit(fsx_table(), opt.fsx_deployment, opt.fsx_per_tib, opt.fsx_capacity_tib, Direction::read);
    } else if (opt.tier_gbps) {
      write_limit = ThroughputLimit{*opt.tier_gbps, *opt.tier_gbps, fmt::format("--tier-gbps {}", *opt.tier_gbps)};
      // The read ceiling is its own figure (W,R); the options default it to the write one.
      const double read_gbps = opt.tier_read_gbps.value_or(*opt.tier_gbps);
      read_limit = ThroughputLimit{read_gbps, read_gbps, fmt::format("--tier-gbps read {}", read_gbps)};
    }
  } catch (const UsageError& e) {
    return usage(e.what());
  }

  // --phases read: the newest committed step, read as a restart would (its manifest says how it
  // was written; a plan that does not match it is exit 2).
  ReadOnlyStep restart;
  if (!opt.write) {
    std::string step_error;
    if (ch.is_root()) {
      try {
        restart = find_restart_step(*storage, opt.target, plan);
      } catch (const UsageError& e) {
        step_error = e.what();
      }
    }
    if (auto failed = ch.agree_on_error(step_error)) return usage(*failed);
    restart.path = ch.broadcast(restart.path);
    restart.name = ch.broadcast(restart.name);
    restart.trial = ch.broadcast(restart.trial);
    restart.seed = static_cast<std::uint32_t>(ch.broadcast(static_cast<double>(restart.seed)));
  }

  const PeerTable peers = PeerTable::exchange(ch);
  const double mem_gbps = memory_gbps(ch);
  const std::uint64_t ram = host_memory_bytes();
  const std::string ram_json = ch.broadcast(nlohmann::json(ch.gather_to_root(std::to_string(ram))).dump());

  std::unique_ptr<ResultWriter> writer;
  std::string output_error;
  CheckpointHeader header_info{plan,         opt,         config,     describe_target(opt.target), mem_gbps,
                               w.node_local, write_limit, read_limit, storage->engine(),           storage->settings()};
  if (ch.is_root()) {
    try {
      ResultFile header =
          checkpoint_header(header_info, ch.size(), w.hosts, nlohmann::json::parse(ram_json), argc, argv);
      writer = std::make_unique<ResultWriter>(header, config.json_path);
    } catch (const std::exception& e) {
      output_error = fmt::format("-J/--json {}: {}", config.json_path, e.what());
    }
  }
  if (const std::string e = ch.broadcast(output_error); !e.empty()) return usage(e);

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
  Run run{w, config, opt, plan, *storage, watchdog, run_id, plan.writer_index(w.rank)};
  // --tiered: the local tier is POSIX; the drain writes through the target's engine.
  std::unique_ptr<Storage> local_storage = opt.tiered.empty() ? nullptr : open_storage(opt.tiered);
  std::optional<Run> local_run;
  std::string tier_dir;
  if (local_storage) {
    local_run.emplace(Run{w, config, opt, plan, *local_storage, watchdog, run_id, run.writer});
    std::string tier_error;
    try {
      if (run.writer >= 0) tier_dir = make_tier_dir(opt, run_id);
    } catch (const StorageError& e) {
      tier_error = fmt::format("--tiered {}: {}", opt.tiered, e.what());
    }
    if (auto failed = ch.agree_on_error(tier_error)) return usage(*failed);
  }

  // A killed --tiered run's local copies (each host's first rank looks; rank 0 prints them).
  std::vector<std::string> stale_tier_notes;
  if (local_storage) {
    for (const auto& host_notes : ch.gather_to_root(ch.local_rank() == 0 ? stale_tier_dirs(opt, run_id) : ""))
      if (!host_notes.empty()) stale_tier_notes.push_back(host_notes);
  }
  if (ch.is_root()) {
    std::printf("%s\n", describe_plan(plan, opt, *storage).c_str());
    if (w.node_local) std::printf("# the target is node-local: each host's first rank commits its own step\n");
    // Partial steps exist only where a rename commits them.
    try {
      for (const auto& n : storage->commits_by_rename() ? storage->entries(opt.target) : std::vector<std::string>{})
        if (n.rfind(".step-", 0) == 0 && n.find(".partial-") != std::string::npos)
          std::printf("# note: %s is an uncommitted step of an earlier run (never a checkpoint; remove it)\n",
                      (fs::path(opt.target) / n).c_str());
    } catch (const StorageError& e) {
      std::printf("# note: uncommitted steps of earlier runs not looked for: %s\n", e.what());
    }
    for (const auto& note : stale_tier_notes) std::printf("%s\n", note.c_str());
    if (storage->local_cache() && ram > 0 && plan.shard_bytes * static_cast<std::uint64_t>(w.size) < ram)
      std::printf(
          "# note: the shards of one host fit in its %.1f GiB of memory (page cache): reads need a cache drop\n",
          static_cast<double>(ram) / 1073741824.0);
    std::printf("%s\n", checkpoint_table_header().c_str());
    std::fflush(stdout);
  }

  int exit = exit_code::ok;
  // The steps this run committed (removed at its end without --keep).
  std::vector<std::string> written_steps;
  std::string final_error;
  std::size_t wrong_shards = 0;
  try {
    for (int trial = 0; trial < config.trials; ++trial) {
      // The step numbering lists the target (on S3, requests): under the watchdog with the set-up.
      watchdog.set_case(trial, Op::checkpoint_write, plan.bytes(), false);
      watchdog.arm(Phase::setup);
      const int step = ch.broadcast(ch.is_root() ? last_step(storage->entries(opt.target)) + 1 : 0);
      std::string committed = restart.path, step_label = restart.name;
      const std::uint32_t seed = opt.write ? config.seed : restart.seed;
      const int data_trial = opt.write ? trial : restart.trial;
      // Data first: generated outside the timed region.
      std::optional<ShardData> data;
      if (run.writer >= 0) data.emplace(seed, data_trial, run.writer, plan.shard_bytes, opt.transfer_bytes);
      bool direct_all = opt.direct;
      if (opt.write) {
        // A step no other run writes into (S3: claimed; two runs into one prefix share none).
        const std::string new_step = ch.broadcast(ch.is_root() ? storage->claim_step(opt.target, step) : std::string());
        committed = (fs::path(opt.target) / new_step).string();
        // The claimed name's number (S3 may have claimed past `step`): the manifest's step is it.
        const int claimed = storage->committed_step_of(new_step);
        // S3 writes the step in place: its manifest, put last, is the commit.
        const std::string partial =
            storage->commits_by_rename() ? (fs::path(opt.target) / partial_name(claimed, run_id)).string() : committed;
        step_label = new_step;
        std::string setup_error;
        watchdog.set_case(trial, Op::checkpoint_write, plan.bytes(), false);
        watchdog.arm(Phase::setup);
        if (w.leader) {
          try {
            storage->make_dir(partial);
            if (opt.layout == CheckpointLayout::shared_file)
              storage->open((fs::path(partial) / kSharedFileName).string(), OpenFor::create_write, {})->close();
          } catch (const StorageError& e) {
            setup_error = e.what();
          }
        }
        if (auto failed = ch.agree_on_error(setup_error)) throw std::runtime_error(*failed);

        // Write phase.
        watchdog.arm(Phase::sample);
        ch.barrier();
        const auto t0 = Clock::now();
        double local_end_s = 0;
        PhaseRun wr = local_run
                          ? tiered_write(run, *local_run, tier_dir, partial, data ? *data : no_shard(), t0, local_end_s)
                          : run.write_shard(partial, data ? *data : no_shard(), t0);
        if (auto failed = ch.agree_on_error(wr.error)) {
          const std::string left = w.leader ? remove_partial(*storage, partial) : "";
          final_error = fmt::format("trial {} failed, its partial step {} {}: {}", trial, partial,
                                    left.empty() ? "removed" : left, *failed);
          exit = exit_code::usage;
          break;
        }
        // Commit: the manifest, the rename into place, the parent's fsync.
        double commit_s = 0;
        std::string commit_error;
        if (w.leader) {
          const auto c0 = Clock::now();
          try {
            commit_step(*storage, opt.target, partial, committed,
                        checkpoint_manifest(header_info, claimed, trial, run_id));
          } catch (const StorageError& e) {
            commit_error = e.what();
          }
          commit_s = seconds_since(c0);
        }
        const auto committed_at = Clock::now();
        if (auto failed = ch.agree_on_error(commit_error)) {
          if (w.leader) remove_partial(*storage, partial);
          final_error = fmt::format("trial {}: the commit failed, its partial step removed: {}", trial, *failed);
          exit = exit_code::usage;
          break;
        }
        commit_s = ch.max_all(commit_s);
        const auto write_phases = ch.gather_to_root(phases_json(wr));
        const auto local_ends =
            local_run ? ch.gather_to_root(fmt::format("{}", local_end_s)) : std::vector<std::string>{};
        direct_all = ch.max_all(wr.direct || run.writer < 0 ? 0.0 : 1.0) == 0;
        watchdog.arm(Phase::aggregate);
        if (ch.is_root()) {
          std::vector<RankPhases> ranks;
          for (const auto& p : write_phases) ranks.push_back(phases_from_json(p));
          PhaseRows rows =
              checkpoint_write_rows(header_info, ranks, commit_s, trial, step_label, direct_all, wr.direct_refused);
          if (local_run) add_tiered_fields(rows, opt.tiered, ranks, local_ends);
          if (exporter) {
            // The shards' time to durable in S3 (FSx's export), after the POSIX commit above.
            const std::vector<s3::ExportShard> shards = export_shards(opt, plan, committed, exporter->where().prefix,
                                                                      [&](int i) { return run.file_of(committed, i); });
            const s3::ExportResult e =
                exporter->wait(shards, committed_at, opt.export_deadline_s, 0.1, s3::lfs_hsm_check());
            double first_start = 1e300;
            for (const auto& r : ranks)
              if (r.writes) first_start = std::min(first_start, r.start_s);
            const ExportSummary summary =
                summarize_export(e, opt, shards.size(), seconds_since(t0) - first_start - seconds_since(committed_at));
            rows.rows.front().extra["export"] = summary.json;
            rows.table += summary.line;
          }
          for (const auto& row : rows.rows) writer->append(row);
          std::printf("%s", rows.table.c_str());
          std::fflush(stdout);
        }
        // --keep: the oldest committed steps this tool wrote go, so a long run cannot fill the tier
        // (those the engine lets this run remove: on S3 only its own, another run's are never touched).
        written_steps.push_back(committed);
        if (w.leader && opt.keep > 0)
          remove_steps([&](std::vector<std::string>&) { return steps_over_keep(*storage, opt.target, opt.keep); },
                       *storage, "--keep");
      }
      if (opt.read) {
        watchdog.set_case(trial, Op::checkpoint_read, plan.bytes(), false);
        watchdog.arm(Phase::setup);
        bool other = false;
        const std::string own = run.writer >= 0 ? run.file_of(committed, run.writer) : "";
        // O_DIRECT reads need no cache drop, where the filesystem takes them (probed on this rank's shard).
        bool reads_direct = opt.direct && direct_all;
        if (opt.direct && !own.empty()) {
          try {
            auto probe_file = storage->open(own, OpenFor::read, {.direct = true});
            reads_direct = probe_file->direct();
            probe_file->close();
          } catch (const StorageError&) {
            reads_direct = false;  // the read itself reports the error
          }
        }
        reads_direct = ch.max_all(reads_direct || run.writer < 0 ? 0.0 : 1.0) == 0 && opt.direct;
        const CacheDrop drop =
            storage->local_cache() ? drop_cache(w, *storage, own, reads_direct, other) : CacheDrop::remote;
        // IOR's -C: read the shard of the writer one host further on.
        int source_writer = run.writer;
        if (drop == CacheDrop::other_node && run.writer >= 0) {
          const int ranks_per_node = w.size / w.nodes;
          for (int k = 1; k <= w.size; ++k) {
            const int r = (w.rank + k * ranks_per_node) % w.size;
            if (plan.writes(r) && w.hosts[static_cast<std::size_t>(r)] != w.hosts[static_cast<std::size_t>(w.rank)]) {
              source_writer = plan.writer_index(r);
              break;
            }
          }
        }
        std::optional<ShardData> expect;
        if (run.writer >= 0) {
          if (source_writer == run.writer)
            expect.swap(data);
          else
            expect.emplace(seed, data_trial, source_writer, plan.shard_bytes, opt.transfer_bytes);
        }
        data.reset();
        watchdog.arm(Phase::sample);
        ch.barrier();
        const auto r0 = Clock::now();
        PhaseRun rd = run.read_shard(committed, source_writer, expect ? *expect : no_shard(), r0);
        if (auto failed = ch.agree_on_error(rd.error)) {
          final_error = fmt::format("trial {}: the read failed: {}", trial, *failed);
          exit = exit_code::usage;
          break;
        }
        const auto read_phases = ch.gather_to_root(phases_json(rd));
        const auto mismatches = ch.gather_to_root(rd.mismatch);
        watchdog.arm(Phase::aggregate);
        if (ch.is_root()) {
          std::vector<RankPhases> ranks;
          for (const auto& p : read_phases) ranks.push_back(phases_from_json(p));
          std::uint64_t wrong = 0;
          for (const auto& m : mismatches) {
            if (m.empty()) continue;
            ++wrong;
            std::fprintf(stderr, "%s: trial %d: %s\n", kCommand, trial, m.c_str());
            if (final_error.empty()) final_error = fmt::format("trial {}: {}", trial, m);
          }
          wrong_shards += wrong;
          PhaseRows rows = checkpoint_read_rows(header_info, ranks, trial, step_label, direct_all,
                                                kCacheDropNames[static_cast<int>(drop)], wrong);
          for (const auto& row : rows.rows) writer->append(row);
          std::printf("%s", rows.table.c_str());
          std::fflush(stdout);
        }
      }
      watchdog.disarm();
    }
  } catch (const std::exception&) {
    ending.end_current_exception(watchdog.describe());
  }
  watchdog.disarm();
  if (!tier_dir.empty()) fs::remove(tier_dir, ec);  // empty once every shard drained; else kept, with them
  if (exit == exit_code::ok && wrong_shards > 0) exit = exit_code::data_check_failed;
  exit = ch.broadcast(exit);
  // Without --keep the run removes what it wrote, as IOR does (an interrupted run never gets here):
  // the steps it committed whose manifests name this run, and in them only the files listed. A step
  // that read back wrong is the evidence and stays.
  if (w.leader && opt.keep == 0 && !written_steps.empty()) {
    if (exit == exit_code::data_check_failed)
      std::printf("# note: this run's steps are kept under %s (a shard read back wrong)\n", opt.target.c_str());
    else
      remove_steps(
          [&](std::vector<std::string>& unreadable) {
            return own_steps(*storage, opt.target, run_id, written_steps, &unreadable);
          },
          *storage, "this run's steps; --keep N keeps the newest N");
  }
  if (ch.is_root()) {
    const std::string status = exit == exit_code::usage ? "failed" : "complete";
    if (!final_error.empty()) std::fprintf(stderr, "%s: %s\n", kCommand, final_error.c_str());
    const bool saved = writer->finish(status, exit, final_error.empty() ? std::nullopt : std::optional(final_error));
    if (saved && !config.json_path.empty()) std::printf("# result file: %s\n", config.json_path.c_str());
  }
  std::fflush(stdout);
  return exit;
}

}  // namespace

int checkpoint_entry(measure::Frame& frame) {
  RunConfig config;
  CheckpointOptions opt;
  try {
    if (!parse_checkpoint_options(frame.argc(), frame.argv(), config, opt, frame.is_root())) return exit_code::ok;
  } catch (const UsageError& e) {
    return frame.usage_error(e.what());
  }
  // The set-up (storage probes, free space, memory bandwidth, the steps already there) is watched:
  // a hang there is exit 3.
  frame.ending().arm_setup(config.timeout_s);
  const int exit = run_checkpoint(frame.channel(), frame.ending(), frame.argc(), frame.argv(), config, opt);
  frame.ending().setup_done();  // an exit 2 before the trials returns with it armed
  return exit;
}

}  // namespace ccbench::cli
