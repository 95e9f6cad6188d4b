#include "compare/summarise.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "compare/bootstrap.hpp"
#include "compare/statistics.hpp"

namespace ccbench::compare {

namespace {

constexpr std::size_t kMinSamples = 10;  // the sampler's own minimum per size (docs/method.md)

std::optional<Interval> percentile_ci(std::vector<double> replicates, double confidence) {
  if (replicates.empty()) return std::nullopt;
  const double a = (1.0 - confidence) / 2.0;
  const double lo = percentile_inplace(replicates, a);
  const double hi = percentile_inplace(replicates, 1.0 - a);
  return Interval{std::exp(lo), std::exp(hi)};
}

// Log trial medians per size, NaN where a trial lacks the size.
TrialTable trial_table(const Matched& m) {
  TrialTable table;
  table.baseline_trials = m.baseline_trials;
  table.candidate_trials = m.candidate_trials;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& size : m.sizes) {
    std::vector<double> b(static_cast<std::size_t>(m.baseline_trials), nan);
    std::vector<double> k(static_cast<std::size_t>(m.candidate_trials), nan);
    for (std::size_t i = 0; i < size.base.trial_ids.size(); ++i) {
      b[static_cast<std::size_t>(size.base.trial_ids[i])] = std::log(size.base.trial_medians[i]);
    }
    for (std::size_t i = 0; i < size.cand.trial_ids.size(); ++i) {
      k[static_cast<std::size_t>(size.cand.trial_ids[i])] = std::log(size.cand.trial_medians[i]);
    }
    table.baseline_log.push_back(std::move(b));
    table.candidate_log.push_back(std::move(k));
  }
  return table;
}

// Intervals from the bootstrap replicates, and the percentile-bootstrap p-value of "geomean ratio
// = 1", consistent with the interval.
void bootstrap_intervals(const TrialEstimates& est, Summary& s) {
  s.ci_method = CiMethod::bootstrap;
  s.geomean.ci95 = percentile_ci(est.geomean_replicates, 0.95);
  s.geomean.ci90 = percentile_ci(est.geomean_replicates, 0.90);
  s.max.ci95 = percentile_ci(est.max_replicates, 0.95);
  s.max.ci90 = percentile_ci(est.max_replicates, 0.90);
  std::size_t below = 0, above = 0;
  for (double v : est.geomean_replicates) {
    below += v <= 0.0 ? 1 : 0;
    above += v >= 0.0 ? 1 : 0;
  }
  const double r = static_cast<double>(est.geomean_replicates.size());
  s.geomean.p_value = std::min(1.0, 2.0 * (static_cast<double>(std::min(below, above)) + 1.0) / (r + 1.0));
}

// Fewer than 2 trials on a side: whole trials cannot be resampled. The geomean's interval then
// comes from the per-size intervals (normal approximation in log space, sizes independent); that
// ignores trial-to-trial variation, which a warning says.
void per_size_intervals(const std::vector<RowResult>& rows, Summary& s) {
  const double z95 = normal_quantile(0.975), z90 = normal_quantile(0.95);
  double var = 0, mean = 0;
  for (const auto& row : rows) {
    if (!row.ci_raw) return;
    const double se = (std::log(row.ci_raw->second) - std::log(row.ci_raw->first)) / (2.0 * z95);
    var += se * se;
    mean += std::log(row.ratio_raw);
  }
  if (rows.empty()) return;
  const double n = static_cast<double>(rows.size());
  mean /= n;
  const double se = std::sqrt(var) / n;
  s.ci_method = CiMethod::per_size;
  s.geomean.ratio = std::exp(mean);
  s.geomean.ci95 = Interval{std::exp(mean - z95 * se), std::exp(mean + z95 * se)};
  s.geomean.ci90 = Interval{std::exp(mean - z90 * se), std::exp(mean + z90 * se)};
  s.geomean.p_value = se > 0 ? std::min(1.0, 2.0 * normal_sf(std::abs(mean) / se)) : 1.0;
  const auto best = std::max_element(rows.begin(), rows.end(),
                                     [](const RowResult& a, const RowResult& b) { return a.ratio_raw < b.ratio_raw; });
  s.max.ratio = best->ratio_raw;
  s.max.at = best->key;
  s.max.ci95 = best->ci_raw;
}

void side_warnings(const Side& side, const std::vector<RowResult>& rows, bool baseline, int trials, int min_trials,
                   std::vector<std::string>& w) {
  for (const auto& f : side.files) {
    if (f.run.status != "complete") {
      w.push_back(fmt::format("{} run {} is marked {}: its results may be partial", side.name, f.source, f.run.status));
    }
  }
  if (trials < min_trials && !rows.empty()) {
    w.push_back(fmt::format(
        "{} has {} trial(s): trials are the independent unit; per-size tests fall back to pooled samples (which "
        "ignore launch-to-launch variation) and a claim verdict needs at least {} trials per side (ccbench run "
        "--trials {})",
        side.name, trials, min_trials, min_trials));
  }
  std::vector<RowKey> few, summary, not_met, wrong;
  std::size_t fewest = std::numeric_limits<std::size_t>::max();
  for (const auto& r : rows) {
    const SideAtSize& s = baseline ? r.baseline : r.candidate;
    if (s.summary) {
      summary.push_back(r.key);
    } else if (s.samples < kMinSamples) {
      few.push_back(r.key);
      fewest = std::min(fewest, s.samples);
    }
    if (s.rows_ci_not_met > 0) not_met.push_back(r.key);
    if (s.wrong > 0) wrong.push_back(r.key);
  }
  if (!few.empty()) {
    w.push_back(
        fmt::format("{}: {} size(s) have fewer than {} samples (fewest {}; a 95% CI of the median needs at "
                    "least 6): {}",
                    side.name, few.size(), kMinSamples, fewest, list_keys(few)));
  }
  if (!summary.empty()) {
    w.push_back(
        fmt::format("{}: {} size(s) hold imported summary statistics, not measured samples: CIs of the "
                    "median are unavailable for them: {}",
                    side.name, summary.size(), list_keys(summary)));
  }
  if (!not_met.empty()) {
    w.push_back(fmt::format("{}: {} size(s) did not reach the CI target (ci_target_met false): {}", side.name,
                            not_met.size(), list_keys(not_met)));
  }
  if (!wrong.empty()) {
    w.push_back(fmt::format("{}: the data check failed (wrong elements) at {} size(s): {}", side.name, wrong.size(),
                            list_keys(wrong)));
  }
}

}  // namespace

std::string list_keys(const std::vector<RowKey>& keys, std::size_t limit) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < keys.size() && i < limit; ++i) names.push_back(format_key(keys[i]));
  std::string s = fmt::format("{}", fmt::join(names, ", "));
  if (keys.size() > limit) s += fmt::format(" and {} more", keys.size() - limit);
  return s;
}

void summarise(const Matched& m, const std::vector<RowResult>& rows, int resamples, std::uint64_t seed, Summary& s,
               std::vector<std::string>& warnings) {
  s.sizes = rows.size();
  if (m.sizes.empty()) return;
  const bool resamplable = m.baseline_trials >= 2 && m.candidate_trials >= 2;
  const TrialEstimates est = bootstrap_trials(trial_table(m), resamplable ? resamples : 0, seed);
  s.geomean.ratio = std::exp(est.geomean_log);
  s.max.ratio = std::exp(est.max_log);
  s.max.at = m.sizes[est.argmax].key;
  if (resamplable && resamples > 0) {
    bootstrap_intervals(est, s);
  } else {
    per_size_intervals(rows, s);
    warnings.push_back(
        "fewer than 2 trials on a side: the across-size CI cannot resample whole trials; it comes from the "
        "per-size CIs (assuming independent sizes), or is unavailable where those are");
  }
}

void data_warnings(const Comparison& c, const Side& baseline, const Side& candidate, int min_trials,
                   std::vector<std::string>& w) {
  side_warnings(baseline, c.rows, true, c.baseline.trials, min_trials, w);
  side_warnings(candidate, c.rows, false, c.candidate.trials, min_trials, w);
  if (!c.only_in_baseline.empty()) {
    w.push_back(fmt::format("{} size(s) only in the baseline (not compared): {}", c.only_in_baseline.size(),
                            list_keys(c.only_in_baseline)));
  }
  if (!c.only_in_candidate.empty()) {
    w.push_back(fmt::format("{} size(s) only in the candidate (not compared): {}", c.only_in_candidate.size(),
                            list_keys(c.only_in_candidate)));
  }
}

}  // namespace ccbench::compare
