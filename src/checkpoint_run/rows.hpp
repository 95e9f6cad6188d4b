// `ccbench checkpoint`'s result file: the header (hosts, software, the target's facts, the config),
// the rows of one trial (checkpoint_write, checkpoint_commit, checkpoint_read; docs/result-format.md
// "Checkpoint rows"), their console lines, and the manifest a commit writes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checkpoint/durable_time.hpp"
#include "checkpoint/plausibility.hpp"
#include "checkpoint/shard_plan.hpp"
#include "checkpoint/storage.hpp"
#include "checkpoint_run/options.hpp"
#include "core/result.hpp"
#include "sweep/run_config.hpp"

namespace ccbench::checkpoint_run {

struct CheckpointHeader {
  const checkpoint::ShardPlan& plan;
  const CheckpointOptions& opt;
  const RunConfig& config;
  nlohmann::json target;   // checkpoint::describe_target
  double memory_gbps = 0;  // the hosts' memory-copy bandwidth (plausibility)
  bool node_local = false;
  std::optional<checkpoint::ThroughputLimit> write_limit, read_limit;
  checkpoint::Engine engine;       // the target's: every row's backend, config.backend
  nlohmann::json engine_settings;  // Storage::settings(): config.checkpoint.<engine> when not null
};

// Rank 0: the result file's header. `ram` holds every rank's MemTotal (bytes, as text); `command`
// is the command line as given (its first word recorded as "ccbench checkpoint").
ResultFile checkpoint_header(const CheckpointHeader& h, int ranks, const std::vector<std::string>& hosts,
                             const nlohmann::json& ram, const std::vector<std::string>& command);

struct PhaseRows {
  std::vector<ResultRow> rows;
  std::string table;  // console lines
};

std::string checkpoint_table_header();

// checkpoint_write (time to durable, commit included) and checkpoint_commit (the commit alone).
PhaseRows checkpoint_write_rows(const CheckpointHeader& h, const std::vector<checkpoint::RankPhases>& ranks,
                                double commit_s, int trial, const std::string& step, bool direct,
                                const std::string& direct_refused);
// checkpoint_read after the cache drop `cache_drop`; `wrong` shards read back wrong.
PhaseRows checkpoint_read_rows(const CheckpointHeader& h, const std::vector<checkpoint::RankPhases>& ranks, int trial,
                               const std::string& step, bool direct, const std::string& cache_drop,
                               std::uint64_t wrong);

// The manifest a commit writes into the step directory (JSON text).
std::string checkpoint_manifest(const CheckpointHeader& h, int step, int trial, const std::string& run_id);

}  // namespace ccbench::checkpoint_run
