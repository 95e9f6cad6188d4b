#include "screen/screen_config.hpp"

#include <fmt/format.h>

#include <array>
#include <numeric>
#include <tuple>

#include "core/bandwidth.hpp"
#include "core/error.hpp"
#include "core/output_folders.hpp"
#include "core/types.hpp"
#include "launch/allocation.hpp"
#include "launch/command_line.hpp"

namespace ccbench::screen {
namespace {

namespace fs = std::filesystem;

// srun may start more tasks on a node than it has CPUs when told to.
bool overcommits(const std::vector<std::string>& launcher_args) {
  for (const auto& a : launcher_args)
    if (a == "-O" || a == "--overcommit" || a == "--oversubscribe") return true;
  return false;
}

}  // namespace

void check_screen_config(const ScreenConfig& c, std::string_view small_text, std::string_view large_text) {
  // Sizes a test can carry whole: ccbench run rounds a size down to whole elements (per rank for
  // the ops whose size is a total over ranks), and the screen looks its rows up by size.
  if (const auto op = parse_op(c.op)) {
    for (const auto& [flag, text, size] : {std::tuple{"-b/--small-bytes", small_text, c.small_bytes},
                                           std::tuple{"-e/--large-bytes", large_text, c.large_bytes}}) {
      const std::array<int, 2> rank_counts{c.ranks_per_host, 2 * c.ranks_per_host};  // one host, a pair
      for (int ranks : rank_counts) {
        const OpLayout layout = layout_for(*op, DType::float32, size, ranks);
        if (layout.count != 0 && layout.bytes == size) continue;
        // A size both a one-host test and a pair test carry whole.
        const std::uint64_t granule = std::lcm(whole_size_granule_bytes(*op, DType::float32, rank_counts[0]),
                                               whole_size_granule_bytes(*op, DType::float32, rank_counts[1]));
        throw UsageError(
            fmt::format("{} {}: {} of float over {} ranks carries {} bytes, not {}: give a multiple of {} bytes", flag,
                        text, c.op, ranks, layout.bytes, size, granule));
      }
    }
  }
  if (!c.healthy_out.empty() && !c.exclude_out.empty() &&
      fs::weakly_canonical(fs::absolute(c.healthy_out)) == fs::weakly_canonical(fs::absolute(c.exclude_out)))
    throw UsageError(
        fmt::format("--healthy-out and --exclude-out: both are {}; give two files", c.healthy_out.string()));
  for (const auto& [flag, path] :
       {std::pair{"--healthy-out", c.healthy_out}, std::pair{"--exclude-out", c.exclude_out}}) {
    if (!path.empty()) prepare_output_file(path.string(), flag);  // before any test
  }
  if (fs::exists(c.out)) throw UsageError(fmt::format("--out {}: exists; choose a new folder", c.out.string()));
  if (!launch::on_path(c.launcher_name))
    throw UsageError(fmt::format("--launcher {}: '{}' is not on PATH", c.launcher_name, c.launcher_name));
  if (c.launcher == launch::Launcher::srun && !overcommits(c.launcher_args))
    if (const auto allocation = launch::allocation_from_environment())
      launch::check_ranks_fit(*allocation, c.hosts, c.ranks_per_host);
}

}  // namespace ccbench::screen
