#include "checkpoint_run/trials.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "checkpoint/step_dirs.hpp"
#include "checkpoint/step_store.hpp"
#include "checkpoint_run/export.hpp"
#include "checkpoint_run/tiered.hpp"
#include "core/error.hpp"

namespace ccbench::checkpoint_run {

namespace fs = std::filesystem;
using namespace ccbench::checkpoint;

namespace {

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

void print_rows(ResultWriter& writer, const PhaseRows& rows) {
  for (const auto& row : rows.rows) writer.append(row);
  std::printf("%s", rows.table.c_str());
  std::fflush(stdout);
}

}  // namespace

void remove_steps(const std::function<std::vector<CommittedStep>(std::vector<std::string>&)>& find, Storage& storage,
                  const char* why) {
  Removal done;
  try {
    std::vector<std::string> unreadable;
    done = checkpoint::remove_steps(storage, find(unreadable));
    done.kept.insert(done.kept.end(), unreadable.begin(), unreadable.end());
  } catch (const StorageError& e) {
    done.kept.push_back(fmt::format("steps not removed ({}): {}", why, e.what()));
  }
  for (const auto& left : done.kept) std::printf("# note: %s\n", left.c_str());
  if (!done.removed.empty())
    std::printf("# removed %s (%s)\n", fmt::format("{}", fmt::join(done.removed, ", ")).c_str(), why);
  std::fflush(stdout);
}

Trials::Trials(TrialContext context)
    : c_(std::move(context)),
      target_{c_.w, c_.opt, c_.header.plan, c_.storage, c_.header.plan.writer_index(c_.w.rank)} {}

void Trials::fail(std::string message) {
  final_error_ = std::move(message);
  failed_ = true;
}

// The step numbering lists the target (on S3, requests): under the watchdog with the set-up.
Trials::Step Trials::claim_step(int trial) {
  ControlChannel& ch = c_.w.ch;
  c_.watchdog.set_case(trial, Op::checkpoint_write, c_.header.plan.bytes(), false);
  c_.watchdog.arm(Phase::setup);
  Step step;
  step.committed = c_.restart.path;
  step.label = c_.restart.name;
  step.seed = c_.opt.write ? c_.config.seed : c_.restart.seed;
  step.data_trial = c_.opt.write ? trial : c_.restart.trial;
  const int next = ch.broadcast(ch.is_root() ? last_step(c_.storage.entries(c_.opt.target)) + 1 : 0);
  if (!c_.opt.write) return step;
  // A step no other run writes into (S3: claimed; two runs into one prefix share none).
  const std::string new_step = ch.broadcast(ch.is_root() ? c_.storage.claim_step(c_.opt.target, next) : std::string());
  step.committed = (fs::path(c_.opt.target) / new_step).string();
  step.label = new_step;
  return step;
}

bool Trials::run(int trial) {
  Step step = claim_step(trial);
  // Data first: generated outside the timed region.
  std::optional<ShardData> data;
  const ShardPlan& plan = c_.header.plan;
  if (target_.writer >= 0)
    data.emplace(step.seed, step.data_trial, target_.writer, plan.shard_bytes, c_.opt.transfer_bytes);
  bool direct_all = c_.opt.direct;
  if (c_.opt.write && !write_and_commit(trial, step, data, direct_all)) return false;
  if (c_.opt.read && !read_back(trial, step, data, direct_all)) return false;
  c_.watchdog.disarm();
  return true;
}

bool Trials::write_and_commit(int trial, Step& step, const std::optional<ShardData>& data, bool& direct_all) {
  ControlChannel& ch = c_.w.ch;
  const World& w = c_.w;
  const ShardPlan& plan = c_.header.plan;
  const std::string& committed = step.committed;
  // The claimed name's number (S3 may have claimed past the next one): the manifest's step is it.
  const int claimed = c_.storage.committed_step_of(step.label);
  // S3 writes the step in place: its manifest, put last, is the commit.
  const std::string partial = c_.storage.commits_by_rename()
                                  ? (fs::path(c_.opt.target) / partial_name(claimed, c_.run_id)).string()
                                  : committed;
  std::string setup_error;
  c_.watchdog.set_case(trial, Op::checkpoint_write, plan.bytes(), false);
  c_.watchdog.arm(Phase::setup);
  if (w.leader) {
    try {
      c_.storage.make_dir(partial);
      if (c_.opt.layout == CheckpointLayout::shared_file)
        c_.storage.open((fs::path(partial) / kSharedFileName).string(), OpenFor::create_write, {})->close();
    } catch (const StorageError& e) {
      setup_error = e.what();
    }
  }
  if (auto failed = ch.agree_on_error(setup_error)) throw std::runtime_error(*failed);

  // Write: every writer's shard after a barrier.
  c_.watchdog.arm(Phase::sample);
  ch.barrier();
  const auto t0 = Clock::now();
  double local_end_s = 0;
  const ShardData& shard = data ? *data : no_shard();
  PhaseRun wr = c_.local ? tiered_write(target_, *c_.local, c_.tier_dir, partial, shard, t0, local_end_s)
                         : target_.write_shard(partial, shard, t0);
  if (auto failed = ch.agree_on_error(wr.error)) {
    const std::string left = w.leader ? remove_partial(c_.storage, partial) : "";
    fail(fmt::format("trial {} failed, its partial step {} {}: {}", trial, partial, left.empty() ? "removed" : left,
                     *failed));
    return false;
  }
  // Commit: the manifest, the rename into place, the parent's fsync.
  double commit_s = 0;
  std::string commit_error;
  if (w.leader) {
    const auto c0 = Clock::now();
    try {
      commit_step(c_.storage, c_.opt.target, partial, committed,
                  checkpoint_manifest(c_.header, claimed, trial, c_.run_id));
    } catch (const StorageError& e) {
      commit_error = e.what();
    }
    commit_s = seconds_since(c0);
  }
  const auto committed_at = Clock::now();
  if (auto failed = ch.agree_on_error(commit_error)) {
    if (w.leader) remove_partial(c_.storage, partial);
    fail(fmt::format("trial {}: the commit failed, its partial step removed: {}", trial, *failed));
    return false;
  }
  commit_s = ch.max_all(commit_s);
  const auto write_phases = ch.gather_to_root(phases_json(wr));
  const auto local_ends = c_.local ? ch.gather_to_root(fmt::format("{}", local_end_s)) : std::vector<std::string>{};
  direct_all = ch.max_all(wr.direct || target_.writer < 0 ? 0.0 : 1.0) == 0;
  c_.watchdog.arm(Phase::aggregate);
  if (ch.is_root()) {
    std::vector<RankPhases> ranks;
    for (const auto& p : write_phases) ranks.push_back(phases_from_json(p));
    PhaseRows rows =
        checkpoint_write_rows(c_.header, ranks, commit_s, trial, step.label, direct_all, wr.direct_refused);
    if (c_.local) add_tiered_fields(rows, c_.opt.tiered, ranks, local_ends);
    if (c_.exporter) add_export(rows, ranks, committed, t0, committed_at);
    print_rows(*c_.writer, rows);
  }
  // --keep: the oldest committed steps this tool wrote go, so a long run cannot fill the tier
  // (those the engine lets this run remove: on S3 only its own, another run's are never touched).
  written_steps_.push_back(committed);
  if (w.leader && c_.opt.keep > 0)
    remove_steps([&](std::vector<std::string>&) { return steps_over_keep(c_.storage, c_.opt.target, c_.opt.keep); },
                 c_.storage, "--keep");
  return true;
}

// Rank 0, --export-to: the shards' time to durable in S3 (FSx's export), after the POSIX commit; the
// write row's `export` and its console line. `t0`: the write phase's start after its barrier.
void Trials::add_export(PhaseRows& rows, const std::vector<RankPhases>& ranks, const std::string& committed,
                        Clock::time_point t0, Clock::time_point committed_at) {
  const std::vector<s3::ExportShard> shards =
      export_shards(c_.opt, c_.header.plan, committed, c_.exporter->where().prefix,
                    [&](int i) { return target_.file_of(committed, i); });
  const s3::ExportResult e =
      c_.exporter->wait(shards, committed_at, c_.opt.export_deadline_s, 0.1, s3::lfs_hsm_check());
  double first_start = 1e300;
  for (const auto& r : ranks)
    if (r.writes) first_start = std::min(first_start, r.start_s);
  const ExportSummary summary =
      summarize_export(e, c_.opt, shards.size(), seconds_since(t0) - first_start - seconds_since(committed_at));
  rows.rows.front().extra["export"] = summary.json;
  rows.table += summary.line;
}

bool Trials::read_back(int trial, const Step& step, std::optional<ShardData>& data, bool direct_all) {
  ControlChannel& ch = c_.w.ch;
  World& w = c_.w;
  const ShardPlan& plan = c_.header.plan;
  const CheckpointOptions& opt = c_.opt;
  c_.watchdog.set_case(trial, Op::checkpoint_read, plan.bytes(), false);
  c_.watchdog.arm(Phase::setup);
  bool other = false;
  const std::string own = target_.writer >= 0 ? target_.file_of(step.committed, target_.writer) : "";
  // O_DIRECT reads need no cache drop, where the filesystem takes them (probed on this rank's shard).
  bool reads_direct = opt.direct && direct_all;
  if (opt.direct && !own.empty()) {
    try {
      auto probe_file = c_.storage.open(own, OpenFor::read, {.direct = true});
      reads_direct = probe_file->direct();
      probe_file->close();
    } catch (const StorageError&) {
      reads_direct = false;  // the read itself reports the error
    }
  }
  reads_direct = ch.max_all(reads_direct || target_.writer < 0 ? 0.0 : 1.0) == 0 && opt.direct;
  const CacheDrop drop =
      c_.storage.local_cache() ? drop_cache(w, c_.storage, own, reads_direct, other) : CacheDrop::remote;
  // IOR's -C: read the shard of the writer one host further on.
  int source_writer = target_.writer;
  if (drop == CacheDrop::other_node && target_.writer >= 0) {
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
  if (target_.writer >= 0) {
    if (source_writer == target_.writer)
      expect.swap(data);
    else
      expect.emplace(step.seed, step.data_trial, source_writer, plan.shard_bytes, opt.transfer_bytes);
  }
  data.reset();
  c_.watchdog.arm(Phase::sample);
  ch.barrier();
  const auto r0 = Clock::now();
  PhaseRun rd = target_.read_shard(step.committed, source_writer, expect ? *expect : no_shard(), r0);
  if (auto failed = ch.agree_on_error(rd.error)) {
    fail(fmt::format("trial {}: the read failed: {}", trial, *failed));
    return false;
  }
  const auto read_phases = ch.gather_to_root(phases_json(rd));
  const auto mismatches = ch.gather_to_root(rd.mismatch);
  c_.watchdog.arm(Phase::aggregate);
  if (ch.is_root()) {
    std::vector<RankPhases> ranks;
    for (const auto& p : read_phases) ranks.push_back(phases_from_json(p));
    std::uint64_t wrong = 0;
    for (const auto& m : mismatches) {
      if (m.empty()) continue;
      ++wrong;
      std::fprintf(stderr, "%s: trial %d: %s\n", kCommand, trial, m.c_str());
      if (final_error_.empty()) final_error_ = fmt::format("trial {}: {}", trial, m);
    }
    wrong_shards_ += wrong;
    print_rows(*c_.writer, checkpoint_read_rows(c_.header, ranks, trial, step.label, direct_all, name(drop), wrong));
  }
  return true;
}

int Trials::agree_exit() {
  int exit = failed_ ? exit_code::usage : exit_code::ok;
  if (exit == exit_code::ok && wrong_shards_ > 0) exit = exit_code::data_check_failed;
  return c_.w.ch.broadcast(exit);
}

void Trials::clean_up(int exit) {
  // Without --keep the run removes what it wrote, as IOR does (an interrupted run never gets here):
  // the steps it committed whose manifests name this run, and in them only the files listed. A step
  // that read back wrong is the evidence and stays.
  if (!c_.w.leader || c_.opt.keep != 0 || written_steps_.empty()) return;
  if (exit == exit_code::data_check_failed) {
    std::printf("# note: this run's steps are kept under %s (a shard read back wrong)\n", c_.opt.target.c_str());
    return;
  }
  remove_steps(
      [&](std::vector<std::string>& unreadable) {
        return own_steps(c_.storage, c_.opt.target, c_.run_id, written_steps_, &unreadable);
      },
      c_.storage, "this run's steps; --keep N keeps the newest N");
}

}  // namespace ccbench::checkpoint_run
