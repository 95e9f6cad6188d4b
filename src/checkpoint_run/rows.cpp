#include "checkpoint_run/rows.hpp"

#include <fmt/format.h>

#include <map>

#include "checkpoint/s3/protocol.hpp"
#include "checkpoint/step_dirs.hpp"
#include "core/bandwidth.hpp"
#include "core/run_metadata.hpp"
#include "core/types.hpp"
#include "system/host_info.hpp"
#include "system/library_versions.hpp"
#include "system/tool_version.hpp"

namespace ccbench::checkpoint_run {
namespace {

using checkpoint::PhaseTiming;
using checkpoint::RankPhases;
using nlohmann::json;

// One trial's row: time_us is the trial's one sample (the trial is the unit compare resamples).
ResultRow make_row(const CheckpointHeader& h, Op op, double seconds, int trial) {
  ResultRow row;
  row.op = std::string(name(op));
  row.backend = checkpoint::engine_name(h.engine);
  row.dtype = "uint8";
  row.bytes = h.plan.bytes();
  row.count = row.bytes;
  row.ranks = h.plan.ranks;
  row.trial = trial;
  const double us = std::max(seconds * 1e6, 1e-3);
  row.samples_us = {us};
  row.time_us = {us, us, us, us, us, us, us};
  row.algbw_gbps = algbw_gbps(row.bytes, us);
  row.busbw_gbps = busbw_gbps(op, row.ranks, row.bytes, us);  // bus factor 1
  return row;
}

std::uint64_t total_retries(const std::vector<RankPhases>& ranks) {
  std::uint64_t n = 0;
  for (const auto& r : ranks) n += r.retries;
  return n;
}

json per_rank(const std::vector<RankPhases>& ranks, const char* io_key) {
  json out = json::array();
  for (const auto& r : ranks) {
    if (!r.writes) continue;
    out.push_back({{"rank", r.rank},
                   {"host", r.host},
                   {"start_s", r.start_s},
                   {"open_s", r.open_s},
                   {io_key, r.io_s},
                   {"fsync_s", r.fsync_s},
                   {"close_s", r.close_s},
                   {"end_s", r.end_s},
                   {"retries", r.retries}});
  }
  return out;
}

json phase_json(const CheckpointHeader& h, const PhaseTiming& t, const std::string& step, const char* phase) {
  return {{"phase", phase},
          {"step", step},
          {"layout", name(h.opt.layout)},
          {"transfer_bytes", h.opt.transfer_bytes},
          {"shard_bytes", h.plan.shard_bytes},
          {"writers", h.plan.writers},
          {"model_bytes", h.plan.model_bytes},
          {"ranks_s", t.ranks_s},
          {"commit_s", t.commit_s},
          {"time_to_durable_s", t.time_to_durable_s},
          {"slowest",
           {{"rank", t.slowest_rank},
            {"host", t.slowest_host},
            {"seconds", t.slowest_s},
            {"median_rank_s", t.median_rank_s},
            {"tail_ratio", t.tail_ratio}}}};
}

std::string table_line(int trial, const char* phase, const ResultRow& row, double commit_s, const PhaseTiming& t,
                       const std::string& cache, const std::optional<std::string>& note) {
  return fmt::format("{:>7} {:<7} {:>14} {:>10.3f} {:>9.4f} {:>9} {:>6} {:<12} {:>5.2f}  {:<12} {}\n", trial, phase,
                     row.bytes, row.time_us.median / 1e6, row.busbw_gbps,
                     commit_s >= 0 ? fmt::format("{:.4f}", commit_s) : "-", t.slowest_rank, t.slowest_host,
                     t.tail_ratio, cache, note.value_or(""));
}

}  // namespace

std::string checkpoint_table_header() {
  return fmt::format(
      "#{:>6} {:<7} {:>14} {:>10} {:>9} {:>9} {:>6} {:<12} {:>5}  {:<12} {}\n#{:>6} {:<7} {:>14} {:>10} "
      "{:>9} {:>9} {:>6} {:<12} {:>5}  {:<12} {}",
      "trial", "phase", "bytes", "time", "GB/s", "commit", "slowest", "", "tail", "cache", "note", "", "", "(B)", "(s)",
      "", "(s)", "rank", "host", "", "", "");
}

ResultFile checkpoint_header(const CheckpointHeader& h, int ranks, const std::vector<std::string>& hosts,
                             const json& ram, const std::vector<std::string>& command) {
  ResultFile file;
  file.tool = {{"name", "ccbench"}, {"version", system::tool_version()}, {"git", system::tool_git_commit()}};
  file.run.started_at = utc_timestamp_now();
  file.run.command = command;
  if (!file.run.command.empty()) file.run.command[0] = "ccbench checkpoint";
  for (auto& word : file.run.command) word = checkpoint::s3::redact_userinfo(word);  // an endpoint's password
  file.run.label = h.config.label;
  std::map<std::string, int> per_host;
  json host_list = json::array();
  const system::HostInfo local = system::read_host_info();
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    if (per_host[hosts[r]]++ > 0) continue;
    json entry = hosts[r] == local.hostname ? system::to_json(local) : json{{"hostname", hosts[r]}};
    entry["memory_bytes"] = r < ram.size() ? std::stoull(ram[r].get<std::string>()) : 0;
    host_list.push_back(entry);
  }
  int ranks_per_node = 0;
  for (const auto& [n, c] : per_host) ranks_per_node = std::max(ranks_per_node, c);
  record_topology(file, {.ranks = ranks,
                         .nodes = static_cast<std::int64_t>(per_host.size()),
                         .ranks_per_node = ranks_per_node,
                         .instance_type = h.config.instance_type.empty() ? local.product_name : h.config.instance_type,
                         .hosts = host_list});
  record_fabric(file, {});
  file.software = system::library_versions();
  file.environment = system::environment_at_startup();
  for (auto& value : file.environment)  // OMPI_ARGV repeats the command line
    if (value.is_string()) value = checkpoint::s3::redact_userinfo(value.get<std::string>());
  const auto limit = [](const std::optional<checkpoint::ThroughputLimit>& l) {
    return l ? json{{"baseline_gbps", l->baseline_gbps}, {"ceiling_gbps", l->ceiling_gbps}, {"source", l->source}}
             : json(nullptr);
  };
  file.config = {{"backend", checkpoint::engine_name(h.engine)},
                 {"command", "checkpoint"},
                 {"trials", h.config.trials},
                 {"seed", h.config.seed},
                 {"timeout_s", h.config.timeout_s},
                 {"timing",
                  {{"method", "checkpoint"},
                   {"sample",
                    "one trial: last writing rank's end - first writing rank's start after a barrier, "
                    "plus the commit (manifest, rename, parent fsync)"},
                   {"statistic", "time to durable per trial; trials are the unit"},
                   {"synchronisation", "MPI_Barrier before each phase"}}},
                 {"checkpoint",
                  {{"target", h.target},
                   {"tier", h.opt.tier.empty() ? json(nullptr) : json(h.opt.tier)},
                   {"tier_gbps", h.opt.tier_gbps ? json(*h.opt.tier_gbps) : json(nullptr)},
                   {"fsx", h.opt.fsx_deployment.empty() ? json(nullptr)
                                                        : json{{"deployment", h.opt.fsx_deployment},
                                                               {"throughput_per_tib_mbps", h.opt.fsx_per_tib},
                                                               {"capacity_tib", h.opt.fsx_capacity_tib}}},
                   {"write_limit", limit(h.write_limit)},
                   {"read_limit", limit(h.read_limit)},
                   {"memory_gbps", h.memory_gbps},
                   {"node_local", h.node_local},
                   {"layout", name(h.opt.layout)},
                   {"transfer_bytes", h.opt.transfer_bytes},
                   {"direct", h.opt.direct},
                   {"fsync", h.opt.fsync},
                   {"phases", h.opt.write ? (h.opt.read ? "write,read" : "write") : "read"},
                   {"keep", h.opt.keep},
                   {"tiered", h.opt.tiered.empty() ? json(nullptr) : json(h.opt.tiered)},
                   {"workload", h.opt.workload.empty() ? json(nullptr) : json(h.opt.workload)},
                   {"plan",
                    {{"model_bytes", h.plan.model_bytes},
                     {"shard_bytes", h.plan.shard_bytes},
                     {"bytes", h.plan.bytes()},
                     {"writers", h.plan.writers},
                     {"ranks", h.plan.ranks},
                     {"tp", h.plan.tp},
                     {"pp", h.plan.pp},
                     {"dp", h.plan.dp},
                     {"rule", h.plan.rule}}}}}};
  if (!h.engine_settings.is_null()) file.config["checkpoint"][checkpoint::engine_name(h.engine)] = h.engine_settings;
  return file;
}

PhaseRows checkpoint_write_rows(const CheckpointHeader& h, const std::vector<RankPhases>& ranks, double commit_s,
                                int trial, const std::string& step, bool direct, const std::string& direct_refused) {
  PhaseRows out;
  const PhaseTiming t = checkpoint::time_to_durable(ranks, commit_s, h.plan.bytes());
  ResultRow write = make_row(h, Op::checkpoint_write, t.time_to_durable_s, trial);
  const auto warning = checkpoint::plausibility_warning(write.busbw_gbps, h.write_limit, h.memory_gbps);
  for (ResultRow* row : {&write}) {
    row->extra["durable"] = h.opt.fsync;
    row->extra["direct"] = direct;
    row->extra["cache_drop"] = nullptr;
    row->extra["checkpoint"] = phase_json(h, t, step, "write");
    row->extra["checkpoint"]["per_rank"] = per_rank(ranks, "write_s");
    row->extra["retries"] = total_retries(ranks);
    row->extra["checkpoint"]["direct_refused"] = direct_refused.empty() ? json(nullptr) : json(direct_refused);
    row->extra["plausibility"] = warning ? json(*warning) : json(nullptr);
  }
  ResultRow commit = make_row(h, Op::checkpoint_commit, commit_s, trial);
  commit.extra["durable"] = h.opt.fsync;
  commit.extra["direct"] = direct;
  commit.extra["cache_drop"] = nullptr;
  commit.extra["checkpoint"] = {{"phase", "commit"}, {"step", step}, {"commit_s", commit_s}};
  std::optional<std::string> note = warning;
  if (!h.opt.fsync) note = note ? "--no-fsync; " + *note : std::optional<std::string>("--no-fsync: not durable");
  out.table = table_line(trial, "write", write, commit_s, t, "-", note);
  out.rows = {std::move(write), std::move(commit)};
  return out;
}

PhaseRows checkpoint_read_rows(const CheckpointHeader& h, const std::vector<RankPhases>& ranks, int trial,
                               const std::string& step, bool direct, const std::string& cache_drop,
                               std::uint64_t wrong) {
  PhaseRows out;
  const PhaseTiming t = checkpoint::time_to_durable(ranks, 0.0, h.plan.bytes());
  ResultRow read = make_row(h, Op::checkpoint_read, t.time_to_durable_s, trial);
  read.wrong = wrong;
  read.extra["durable"] = h.opt.fsync;
  read.extra["direct"] = direct;
  read.extra["cache_drop"] = cache_drop;
  read.extra["checkpoint"] = phase_json(h, t, step, "read");
  read.extra["checkpoint"]["per_rank"] = per_rank(ranks, "read_s");
  read.extra["retries"] = total_retries(ranks);
  std::optional<std::string> warning;
  if (cache_drop != "warm") warning = checkpoint::plausibility_warning(read.busbw_gbps, h.read_limit, h.memory_gbps);
  read.extra["plausibility"] = warning ? json(*warning) : json(nullptr);
  std::optional<std::string> note = warning;
  if (cache_drop == "warm") note = "warm: no cache drop worked (never compared with a cold read)";
  if (wrong > 0) note = fmt::format("{} shard(s) read back wrong", wrong);
  out.table = table_line(trial, "read", read, -1, t, cache_drop, note);
  out.rows = {std::move(read)};
  return out;
}

std::string checkpoint_manifest(const CheckpointHeader& h, int step, int trial, const std::string& run_id) {
  json shards = json::array();
  // `files`: every file of the step besides the manifest, the only ones a removal takes.
  json files = json::array();
  if (h.opt.layout == CheckpointLayout::shared_file) files.push_back(checkpoint::kSharedFileName);
  for (int r = 0; r < h.plan.ranks; ++r) {
    const int wi = h.plan.writer_index(r);
    if (wi < 0) continue;
    shards.push_back({{"rank", r}, {"writer", wi}, {"bytes", h.plan.shard_bytes}});
    if (h.opt.layout != CheckpointLayout::shared_file) files.push_back(checkpoint::shard_name(wi));
  }
  return json{{"tool", checkpoint::kManifestTool},
              {"version", checkpoint::kManifestVersion},
              {"step", step},
              {"trial", trial},
              {"run", run_id},
              {"committed_at", utc_timestamp_now()},
              {"layout", name(h.opt.layout)},
              {"seed", h.config.seed},
              {"bytes", h.plan.bytes()},
              {"shard_bytes", h.plan.shard_bytes},
              {"durable", h.opt.fsync},
              {"shards", shards},
              {"files", files}}
             .dump(1) +
         "\n";
}

}  // namespace ccbench::checkpoint_run
