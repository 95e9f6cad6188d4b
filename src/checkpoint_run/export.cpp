#include "checkpoint_run/export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "checkpoint/step_dirs.hpp"

namespace ccbench::checkpoint_run {

std::vector<checkpoint::s3::ExportShard> export_shards(const CheckpointOptions& opt, const checkpoint::ShardPlan& plan,
                                                       const std::string& committed_dir, const std::string& prefix,
                                                       const std::function<std::string(int)>& file_of) {
  namespace fs = std::filesystem;
  const std::string step = fs::path(committed_dir).filename().string();
  const auto key = [&](const std::string& file) {
    const std::string rel = step + "/" + fs::path(file).filename().string();
    return prefix.empty() ? rel : prefix + "/" + rel;
  };
  std::vector<checkpoint::s3::ExportShard> out;
  if (opt.layout == CheckpointLayout::shared_file) {
    const std::string f = file_of(0);
    out.push_back({f, key(f), plan.shard_bytes * static_cast<std::uint64_t>(plan.writers)});
    return out;
  }
  for (int i = 0; i < plan.writers; ++i) {
    const std::string f = file_of(i);
    out.push_back({f, key(f), plan.shard_bytes});
  }
  return out;
}

ExportSummary summarize_export(const checkpoint::s3::ExportResult& e, const CheckpointOptions& opt, std::size_t shards,
                               double commit_after_start_s) {
  std::vector<double> lags = e.lag_s;
  std::sort(lags.begin(), lags.end());
  const auto median = [&]() -> nlohmann::json {
    if (lags.empty()) return nullptr;
    const std::size_t n = lags.size();
    return n % 2 ? lags[n / 2] : (lags[n / 2 - 1] + lags[n / 2]) / 2;
  };
  ExportSummary s;
  s.json = {
      {"to", opt.export_to},
      {"finished", e.finished},
      {"shards", shards},
      {"found", lags.size()},
      {"lag_median_s", median()},
      {"lag_max_s", lags.empty() ? nlohmann::json(nullptr) : nlohmann::json(lags.back())},
      {"time_to_durable_s", e.finished ? nlohmann::json(commit_after_start_s + e.last_s) : nlohmann::json(nullptr)},
      {"deadline_s", opt.export_deadline_s},
      {"polls", e.polls},
      {"missing", e.missing}};
  if (e.finished) {
    s.line = fmt::format(
        "# export to {}: {} of {} shards in S3, lag median {:.3f} s, max {:.3f} s; durable in S3 "
        "{:.3f} s after the first rank's start\n",
        opt.export_to, lags.size(), shards, median().get<double>(), lags.back(), commit_after_start_s + e.last_s);
  } else {
    s.line = fmt::format("# export NOT finished: {} of {} shards not in {} after the {:.0f} s deadline (first: {})\n",
                         e.missing.size(), shards, opt.export_to, opt.export_deadline_s,
                         e.missing.empty() ? "" : e.missing.front());
  }
  return s;
}

}  // namespace ccbench::checkpoint_run
