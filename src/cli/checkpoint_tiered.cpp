#include "cli/checkpoint_tiered.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <limits>
#include <system_error>

#include "checkpoint/storage.hpp"
#include "checkpoint/target_facts.hpp"
#include "core/error.hpp"

namespace ccbench::cli {

namespace fs = std::filesystem;

void check_tiered(const CheckpointOptions& opt) {
  if (opt.tiered.empty()) return;
  if (!opt.write) throw UsageError("--tiered: needs the write phase (--phases write or write,read)");
  if (opt.layout != CheckpointLayout::file_per_rank) throw UsageError("--tiered: needs --layout file-per-rank");
  if (opt.tiered.find("://") != std::string::npos)
    throw UsageError(
        fmt::format("--tiered {}: the local tier is a local directory (an object store is a --target)", opt.tiered));
  if (const auto c = checkpoint::check_target(opt.tiered); !c.error.empty())
    throw UsageError(fmt::format("--tiered {}: {}", opt.tiered, c.error));
  std::error_code ec;
  if (fs::equivalent(opt.tiered, opt.target, ec))
    throw UsageError(
        fmt::format("--tiered {}: is the --target directory; the local tier must be another one", opt.tiered));
}

std::string make_tier_dir(const CheckpointOptions& opt, const std::string& run_id) {
  const std::string dir = (fs::path(opt.tiered) / fmt::format(".ccbench-tier-{}", run_id)).string();
  std::error_code ec;
  fs::create_directories(dir, ec);  // ranks of one host race for it: existing is fine
  if (ec) throw checkpoint::StorageError(ec.value(), "mkdir", dir, 0);
  return dir;
}

void add_tiered_fields(PhaseRows& rows, const std::string& local_path, const std::vector<checkpoint::RankPhases>& ranks,
                       const std::vector<std::string>& local_end_s) {
  double first = std::numeric_limits<double>::infinity(), last = 0;
  nlohmann::json ends = nlohmann::json::array();
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (!ranks[i].writes) continue;
    const double end = i < local_end_s.size() ? std::stod(local_end_s[i]) : 0.0;
    first = std::min(first, ranks[i].start_s);
    last = std::max(last, end);
    ends.push_back({{"rank", ranks[i].rank}, {"local_end_s", end}});
  }
  for (auto& row : rows.rows) {
    if (row.op != "checkpoint_write") continue;
    const double blocking_s = last - first;
    const double durable_s = row.extra["checkpoint"]["time_to_durable_s"].get<double>();
    row.extra["blocking_us"] = blocking_s * 1e6;
    row.extra["durable_us"] = durable_s * 1e6;
    row.extra["checkpoint"]["tiered"] = {{"local", local_path}, {"blocking_s", blocking_s}, {"per_rank", ends}};
    rows.table += fmt::format("#       tiered: blocking {:.3f} s (local tier), durable {:.3f} s (target)\n", blocking_s,
                              durable_s);
  }
}

}  // namespace ccbench::cli
