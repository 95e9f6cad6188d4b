#include "sweep/percentiles_flag.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "core/error.hpp"
#include "core/percentiles.hpp"
#include "core/sampling.hpp"

namespace ccbench {

CLI::Option* add_percentiles_flag(CLI::App& app, std::string& text) {
  return app.add_option("--percentiles", text,
                        "comma list of percentiles of per-iteration times (e.g. 50,99,99.9): one op a sample, "
                        "each with its 95% CI");
}

void apply_percentiles_flag(RunConfig& config, const std::string& text) {
  if (text.empty()) return;
  const std::vector<double> levels = percentiles::parse_list(text, "--percentiles");
  if (config.timing == TimingMethod::nccl_tests) {
    throw UsageError(
        "--percentiles: per-iteration times need --timing ccbench (nccl-tests timing averages 20 ops a sample "
        "and takes the mean over ranks)");
  }
  if (config.batch > 1) {
    throw UsageError(fmt::format(
        "--percentiles: a sample must be one iteration, but --batch {} times {} ops a sample (leave --batch out)",
        config.batch, config.batch));
  }
  // The level farthest from the median needs the most samples (both counts are symmetric about p50).
  std::size_t need_estimate = 0, need_ci = 0;
  double level_estimate = levels.front(), level_ci = levels.front();
  for (const double p : levels) {
    if (percentiles::min_samples_for_estimate(p) > need_estimate) {
      need_estimate = percentiles::min_samples_for_estimate(p);
      level_estimate = p;
    }
    if (percentiles::min_samples_for_ci(p) > need_ci) {
      need_ci = percentiles::min_samples_for_ci(p);
      level_ci = p;
    }
  }
  if (config.iters && static_cast<std::size_t>(*config.iters) < need_estimate) {
    throw UsageError(
        fmt::format("--percentiles: {} needs at least {} samples a size for an estimate (and {} for its 95% CI), but "
                    "-n/--iters {} takes {}",
                    percentiles::key(level_estimate), need_estimate, percentiles::min_samples_for_ci(level_estimate),
                    *config.iters, *config.iters));
  }
  if (!config.iters && need_ci > static_cast<std::size_t>(kMaxSamplesPerSize)) {
    throw UsageError(fmt::format(
        "--percentiles: a 95% CI of {} needs {} samples a size, more than -n auto takes ({}); give -n/--iters N",
        percentiles::key(level_ci), need_ci, kMaxSamplesPerSize));
  }
  config.percentiles = levels;
  config.batch = 1;
  // -n auto never stops before the widest level has its interval (the time limit waits too).
  if (!config.iters) config.min_samples = std::max(config.min_samples, static_cast<int>(need_ci));
}

}  // namespace ccbench
