// --export-to for a POSIX target (docs/checkpoint.md, "Export to S3"): which objects the export
// must produce for a committed step, and the export's figures (lag per shard, median and max, the
// time to durable in S3) as the write row's `export` and a console line.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/s3/export_watch.hpp"
#include "checkpoint/shard_plan.hpp"
#include "checkpoint_run/options.hpp"

namespace ccbench::checkpoint_run {

// The committed step's shard files and their keys under `prefix` (the path below the target).
std::vector<checkpoint::s3::ExportShard> export_shards(const CheckpointOptions& opt, const checkpoint::ShardPlan& plan,
                                                       const std::string& committed_dir, const std::string& prefix,
                                                       const std::function<std::string(int)>& file_of);

struct ExportSummary {
  nlohmann::json json;
  std::string line;  // "# export ..." for the console table
};

// `commit_after_start_s`: the commit's end after the first writing rank's start, so the time to
// durable in S3 is that plus the last shard's lag.
ExportSummary summarize_export(const checkpoint::s3::ExportResult& e, const CheckpointOptions& opt, std::size_t shards,
                               double commit_after_start_s);

}  // namespace ccbench::checkpoint_run
