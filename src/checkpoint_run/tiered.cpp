#include "checkpoint_run/tiered.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <limits>
#include <system_error>

#include "checkpoint/storage.hpp"
#include "checkpoint/target_facts.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"

namespace ccbench::checkpoint_run {

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
  // Inside the target the tier would be a step folder or beside them, where --keep and the end of
  // the run remove steps (`--tiered TARGET/step-000001 --keep 1` removed the tier itself).
  if (opt.target.find("://") == std::string::npos) {
    const fs::path tier = fs::canonical(opt.tiered, ec);
    const fs::path target = ec ? fs::path() : fs::canonical(opt.target, ec);
    if (!ec) {
      const auto [t, _] = std::mismatch(target.begin(), target.end(), tier.begin(), tier.end());
      if (t == target.end())
        throw UsageError(
            fmt::format("--tiered {}: is inside the --target directory {}; the local tier must be outside it",
                        opt.tiered, opt.target));
    }
  }
}

std::string tier_space_error(const CheckpointOptions& opt, const checkpoint::ShardPlan& plan,
                             const std::vector<std::string>& hosts, int rank) {
  std::uint64_t here = 0;  // bytes the writers of this rank's host put on their local tier
  for (int r = 0; r < static_cast<int>(hosts.size()); ++r)
    if (plan.writes(r) && hosts[static_cast<std::size_t>(r)] == hosts[static_cast<std::size_t>(rank)])
      here += plan.shard_bytes;
  if (here == 0) return "";
  const std::uint64_t free = checkpoint::check_target(opt.tiered).free_bytes;
  const std::uint64_t need = here + here / 100 + (1ULL << 20);  // 1% and 1 MiB for metadata, as for --target
  if (free >= need) return "";
  return fmt::format("--tiered {}: {} free, the local copies need {} (nothing written)", opt.tiered, format_bytes(free),
                     format_bytes(need));
}

std::string stale_tier_dirs(const CheckpointOptions& opt, const std::string& run_id) {
  std::string notes;
  std::error_code ec;
  const std::string own = fmt::format(".ccbench-tier-{}", run_id);
  for (const auto& e : fs::directory_iterator(opt.tiered, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".ccbench-tier-", 0) != 0 || name == own) continue;
    std::uint64_t bytes = 0, files = 0;
    std::error_code fec;
    for (const auto& f : fs::directory_iterator(e.path(), fec)) {
      ++files;
      std::error_code sec;
      if (f.is_regular_file(sec)) bytes += f.file_size(sec);
    }
    if (!notes.empty()) notes += '\n';
    notes += fmt::format(
        "# note: {} holds {} file(s), {}: local copies of an earlier --tiered run that never drained (remove it)",
        e.path().string(), files, format_bytes(bytes));
  }
  return notes;
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

}  // namespace ccbench::checkpoint_run
