#include "sweep/percentiles_flag.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "core/error.hpp"
#include "core/percentiles.hpp"
#include "core/sampling.hpp"

namespace ccbench {
namespace {

// The level farthest from the median needs the most samples (both counts are symmetric about p50).
struct Widest {
  std::size_t need_estimate = 0, need_ci = 0;
  double level_estimate = 0, level_ci = 0;
};

Widest widest(const std::vector<double>& levels) {
  Widest w{0, 0, levels.front(), levels.front()};
  for (const double p : levels) {
    if (percentiles::min_samples_for_estimate(p) > w.need_estimate) {
      w.need_estimate = percentiles::min_samples_for_estimate(p);
      w.level_estimate = p;
    }
    if (percentiles::min_samples_for_ci(p) > w.need_ci) {
      w.need_ci = percentiles::min_samples_for_ci(p);
      w.level_ci = p;
    }
  }
  return w;
}

// `per`: what holds the samples ("size": a row of run's sweep; "row").
void require_estimate(const Widest& w, std::size_t samples, std::string_view flag, std::string_view per) {
  if (samples >= w.need_estimate) return;
  throw UsageError(fmt::format(
      "--percentiles: {} needs at least {} samples a {} for an estimate (and {} for its 95% CI), but {} {} takes {}",
      percentiles::key(w.level_estimate), w.need_estimate, per, percentiles::min_samples_for_ci(w.level_estimate), flag,
      samples, samples));
}

}  // namespace

CLI::Option* add_percentiles_flag(CLI::App& app, std::string& text, std::string_view sample) {
  return app.add_option(
      "--percentiles", text,
      fmt::format("comma list of percentiles of per-iteration times (e.g. 50,99,99.9): {}, each with its 95% CI",
                  sample));
}

std::vector<double> percentiles_for_fixed_samples(const std::string& text, int samples, std::string_view samples_flag) {
  if (text.empty()) return {};
  std::vector<double> levels = percentiles::parse_list(text, "--percentiles");
  require_estimate(widest(levels), static_cast<std::size_t>(std::max(samples, 0)), samples_flag, "row");
  return levels;
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
  const Widest w = widest(levels);
  if (config.iters) require_estimate(w, static_cast<std::size_t>(*config.iters), "-n/--iters", "size");
  if (!config.iters && w.need_ci > static_cast<std::size_t>(kMaxSamplesPerSize)) {
    throw UsageError(fmt::format(
        "--percentiles: a 95% CI of {} needs {} samples a size, more than -n auto takes ({}); give -n/--iters N",
        percentiles::key(w.level_ci), w.need_ci, kMaxSamplesPerSize));
  }
  config.percentiles = levels;
  config.batch = 1;
  // -n auto never stops before the widest level has its interval (the time limit waits too).
  if (!config.iters) config.min_samples = std::max(config.min_samples, static_cast<int>(w.need_ci));
}

}  // namespace ccbench
