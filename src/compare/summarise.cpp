#include "compare/summarise.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "compare/max_critical.hpp"
#include "compare/statistics.hpp"
#include "compare/trial_stats.hpp"
#include "core/host_load_note.hpp"
#include "core/sampling.hpp"

namespace ccbench::compare {

namespace {

constexpr auto kMinSamples = static_cast<std::size_t>(kMinSamplesPerSize);  // the sampler's own minimum per size

// Log trial medians per size, NaN where a trial lacks the size; trials in launch order.
TrialLogs trial_logs(const Matched& m) {
  TrialLogs table;
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
    table.baseline.push_back(std::move(b));
    table.candidate.push_back(std::move(k));
  }
  return table;
}

Interval exp_interval(std::pair<double, double> i) { return Interval{std::exp(i.first), std::exp(i.second)}; }

// Drift: each side's trial values against launch order, and one slope common to both sides. The
// three t tests share a false-flag budget of kDriftFlagRate (Bonferroni: half to the common slope, a
// quarter to each side's own), so launches without a drift flag one in a hundred comparisons at most.
void trends(const TrialLogs& table, Summary& s, std::vector<std::string>& warnings) {
  const auto dev_b = trial_deviations(table.baseline), dev_c = trial_deviations(table.candidate);
  auto side = [&](const std::vector<double>& dev) -> std::optional<SideTrend> {
    const auto t = linear_trend(dev);
    if (!t) return std::nullopt;
    return SideTrend{t->slope, t->p_value, t->n, t->p_value < kDriftFlagRate / 4.0};
  };
  s.baseline_trend = side(dev_b);
  s.candidate_trend = side(dev_c);
  if (const auto t = common_trend(dev_b, dev_c))
    s.drift = SideTrend{t->slope, t->p_value, t->n, t->p_value < kDriftFlagRate / 2.0};
  const auto percent = [](double slope) { return (std::exp(slope) - 1.0) * 100.0; };
  constexpr const char* kWhy =
      "launches are not exchangeable, so a difference between the sides may be the drift; alternate baseline and "
      "candidate launches (A B A B ...)";
  if (s.drift && s.drift->detected) {
    warnings.push_back(fmt::format("the launches drift ({:+.2f}% time per launch on both sides, trend p {:.2g}): {}",
                                   percent(s.drift->slope_per_launch), s.drift->p_value, kWhy));
  }
  for (const auto& [name, t] : {std::pair{"baseline", s.baseline_trend}, std::pair{"candidate", s.candidate_trend}}) {
    if (t && t->detected) {
      warnings.push_back(
          fmt::format("the {} drifts across its {} launches ({:+.2f}% time per launch, trend p {:.2g}): {}", name,
                      t->trials, percent(t->slope_per_launch), t->p_value, kWhy));
    }
  }
}

void side_warnings(const Side& side, const std::vector<RowResult>& rows, bool baseline, int trials, int min_trials,
                   std::vector<std::string>& w) {
  for (const auto& f : side.files) {
    if (f.run.status != "complete") {
      w.push_back(fmt::format("{} run {} is marked {}: its results may be partial", side.name, f.source, f.run.status));
    }
    if (const auto busy = busy_host_note(f.system)) {
      w.push_back(fmt::format("{} run {}: {}: its times may reflect the other work, not the network", side.name,
                              f.source, *busy));
    }
  }
  if (trials < min_trials && !rows.empty()) {
    w.push_back(fmt::format(
        "{} has {} trial(s): trials (launches) are the independent unit; the per-size intervals in the table come "
        "from pooled samples and show the precision inside a launch, not across launches, and a claim verdict "
        "needs at least {} trials per side: separate launches (scripts/launches.sh {} DIR); ccbench run --trials "
        "repeats the plan inside one launch, which shares its placement and its moment",
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

void summarise(const Matched& m, const std::vector<RowResult>& rows, const SummaryOptions& o, Summary& s,
               std::vector<std::string>& warnings) {
  s.sizes = rows.size();
  if (m.sizes.empty()) return;
  // Across sizes, on trials: the geomean from each trial's mean over sizes (a t interval), the max
  // from per-size t intervals whose lower bounds hold jointly at a level from resampled launches
  // (docs/compare.md "Method").
  const TrialLogs table = trial_logs(m);
  const GeomeanEstimate g = geomean_shift(table);
  s.geomean.ratio = std::exp(g.estimate);
  s.geomean.shift = g.shift;
  // The max's estimate: the largest ratio of the table (the same per-size estimates it prints; biased
  // upward by noise, the winner's curse), named by its row. Its interval comes from the trial-level t
  // estimates of every size.
  std::vector<TShift> shifts;
  std::size_t argmax = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].ratio_raw > rows[argmax].ratio_raw) argmax = i;
    if (rows[i].trial_shift) shifts.push_back(*rows[i].trial_shift);
  }
  s.max.ratio = rows[argmax].ratio_raw;
  s.max.at = rows[argmax].key;
  if (g.shift && shifts.size() == rows.size()) {
    s.ci_method = CiMethod::t;
    // Each one-sided level at the rule's per-look level (the identity for one look). For the max the
    // simultaneous level over sizes comes first and is then spread over the looks: exact both when
    // the sizes move together (one sequential test) and when they are independent (Sidak over K
    // sequential tests).
    const double tail95 = s.looks.per_look(0.025), tail90 = s.looks.per_look(0.05);
    s.geomean.ci95 = exp_interval(g.shift->interval(1.0 - 2.0 * tail95));
    s.geomean.ci90 = exp_interval(g.shift->interval(1.0 - 2.0 * tail90));
    s.geomean.p_value = g.shift->p_two_sided();
    const MaxCritical crit = max_critical(table, o.resamples, o.seed);
    s.max_one_look_level95 = crit.per_size_level(0.025);
    s.max_one_look_level90 = crit.per_size_level(0.05);
    s.max_lower_level95 = s.looks.per_look(s.max_one_look_level95);
    s.max_lower_level90 = s.looks.per_look(s.max_one_look_level90);
    // The max's per-size bounds use the spread rule's estimates (moderated: each size's variance
    // shrunk toward the sizes' shared spread); the rows' own intervals stay per size.
    const ModeratedShifts moderated = moderated_shifts(table, o.spread);
    s.spread = o.spread;
    s.spread_prior_baseline = moderated.baseline;
    s.spread_prior_candidate = moderated.candidate;
    s.spread_prior_pooled = moderated.pooled;
    s.max_shifts.clear();
    for (const auto& t : moderated.sizes)
      if (t) s.max_shifts.push_back(*t);
    s.max.ci95 = exp_interval(max_interval(s.max_shifts, s.max_lower_level95, tail95));
    s.max.ci90 = exp_interval(max_interval(s.max_shifts, s.max_lower_level90, tail90));
  } else {
    warnings.push_back(
        "one trial (launch) on each side: launch-to-launch variation cannot be estimated, so there is no interval "
        "across sizes and no gate test; run separate launches (scripts/launches.sh) and compare the folders");
  }
  trends(table, s, warnings);
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
