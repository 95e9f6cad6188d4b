#include "compare/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "compare/gate.hpp"
#include "compare/load.hpp"
#include "compare/statistics.hpp"
#include "compare/verdict.hpp"
#include "core/bandwidth.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"
#include "core/stats.hpp"
#include "core/types.hpp"

namespace ccbench::compare {

std::string format_key(const RowKey& key) {
  std::string s = fmt::format("{} {}", key.op, format_bytes(key.bytes));
  if (key.in_place) s += " in-place";
  if (key.dtype != "float") s += " " + key.dtype;
  return s;
}

namespace {

constexpr std::size_t kMinSamples = 10;  // the sampler's own minimum per size (DESIGN.md)

double busbw_for(const RowKey& key, double time_us) {
  const auto op = parse_op(key.op);
  const double factor = op ? bus_factor(*op, key.ranks) : 1.0;
  return algbw_gbps(key.bytes, time_us) * factor;
}

SideAtSize describe_side(const RowKey& key, const SideSize& s) {
  SideAtSize out;
  out.samples = s.pooled.size();
  out.trials = s.trial_ids.size();
  out.summary = s.summary;
  out.rows_ci_not_met = s.rows_ci_not_met;
  out.wrong = s.wrong;
  out.median_us = stats::median_sorted(s.pooled);
  // An order-statistic CI needs raw samples and n >= 6 to reach 95%; imported summaries get none.
  if (!s.summary && s.pooled.size() >= 6) {
    const auto [lo, hi] = stats::median_ci_indices(s.pooled.size(), 0.95);
    out.ci_us = Interval{s.pooled[lo], s.pooled[hi]};
  }
  out.busbw_gbps = busbw_for(key, out.median_us);
  if (out.ci_us) out.busbw_ci = Interval{busbw_for(key, out.ci_us->second), busbw_for(key, out.ci_us->first)};
  return out;
}

std::vector<double> logs(std::span<const double> v) {
  std::vector<double> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](double x) { return std::log(x); });
  return out;
}

RowResult analyse_size(const MatchedSize& m, int min_trials, double alpha, double normalization) {
  RowResult r;
  r.key = m.key;
  r.baseline = describe_side(m.key, m.base);
  r.candidate = describe_side(m.key, m.cand);
  // Trials are the independent unit when both sides have enough of them; otherwise the pooled
  // samples are (and trial-to-trial variation goes unmeasured: a warning says so).
  const bool by_trials = m.base.trial_medians.size() >= static_cast<std::size_t>(min_trials) &&
                         m.cand.trial_medians.size() >= static_cast<std::size_t>(min_trials);
  r.unit = by_trials ? "trials" : "samples";
  const auto x =
      logs(by_trials ? std::span<const double>(m.base.trial_medians) : std::span<const double>(m.base.pooled));
  const auto y =
      logs(by_trials ? std::span<const double>(m.cand.trial_medians) : std::span<const double>(m.cand.pooled));
  // log(time_base) - log(time_cand) = log(ratio): the Hodges-Lehmann shift of the log times.
  const auto hl = hodges_lehmann(x, y, 0.95);
  const auto mw = mann_whitney(x, y);
  r.ratio_raw = std::exp(hl.estimate);
  if (hl.ci) r.ci_raw = Interval{std::exp(hl.ci->first), std::exp(hl.ci->second)};
  r.p_value = mw.p_value;
  r.mw_exact = mw.exact;
  r.significant = mw.p_value < alpha;
  // The gate and the across-size statistics work on trials whatever --min-trials says: samples of one
  // launch share its placement, so a test on pooled samples cries wolf (docs/compare.md).
  const auto tb = logs(m.base.trial_medians), tc = logs(m.cand.trial_medians);
  r.trial_shift = t_shift(tb, tc);
  r.gate_test = !r.trial_shift ? "none" : (tb.size() >= 2 && tc.size() >= 2 ? "welch_t" : "pooled_t");
  r.p_gate = r.trial_shift ? r.trial_shift->p_two_sided() : 1.0;
  r.ratio = r.ratio_raw * normalization;
  if (r.ci_raw) r.ci = Interval{r.ci_raw->first * normalization, r.ci_raw->second * normalization};
  return r;
}

std::string list_keys(const std::vector<RowKey>& keys, std::size_t limit = 6) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < keys.size() && i < limit; ++i) names.push_back(format_key(keys[i]));
  std::string s = fmt::format("{}", fmt::join(names, ", "));
  if (keys.size() > limit) s += fmt::format(" and {} more", keys.size() - limit);
  return s;
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
        "{} has {} trial(s): trials (launches) are the independent unit; the per-size intervals in the table come "
        "from pooled samples and show the precision inside a launch, not across launches, and a claim verdict "
        "needs at least {} trials per side (separate launches: scripts/launches.sh, or ccbench run --trials {})",
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

Scope effective_scope(const CompareOptions& o) {
  Scope s = o.scope;
  if (o.claim) {
    if (s.ops.empty()) s.ops = o.claim->ops;
    if (o.claim->min_bytes) s.min_bytes = std::max(s.min_bytes, *o.claim->min_bytes);
    if (o.claim->max_bytes) s.max_bytes = std::min(s.max_bytes, *o.claim->max_bytes);
  }
  return s;
}

}  // namespace

Comparison compare_sides(const Side& baseline, const Side& candidate, const CompareOptions& o) {
  if (o.claim && o.gate) throw UsageError("give either a claim or --gate, not both");
  check_allow_mismatch_keys(o.allow_mismatch);
  Comparison c;
  c.claim = o.claim;
  c.gate = o.gate;
  c.metric = o.claim ? o.claim->metric : o.metric;
  c.min_trials = o.min_trials;
  c.alpha = o.alpha;
  c.normalize = o.normalize.value_or(o.claim ? o.claim->normalize : Normalize::none);
  c.summary.statistic = o.claim ? o.claim->statistic : o.statistic;
  c.summary.seed = o.seed;
  c.summary.resamples = o.resamples;
  const Scope scope = effective_scope(o);

  // Stage 2: match.
  Matched m = match_sides(baseline, candidate, scope);
  c.only_in_baseline = m.only_in_baseline;
  c.only_in_candidate = m.only_in_candidate;
  c.baseline = {baseline.inputs, baseline.files.size(), m.baseline_trials, std::nullopt, std::nullopt};
  c.candidate = {candidate.inputs, candidate.files.size(), m.candidate_trials, std::nullopt, std::nullopt};

  // Comparability.
  const MetadataReport meta =
      check_metadata(baseline, candidate, scope, o.allow_mismatch, o.claim ? &*o.claim : nullptr);
  c.differences = meta.differences;
  c.mismatches = meta.mismatches;
  c.baseline.link_gbps = meta.baseline_link_gbps;
  c.candidate.link_gbps = meta.candidate_link_gbps;
  const bool links_known = meta.baseline_link_gbps && meta.candidate_link_gbps;
  const bool links_differ = links_known && *meta.baseline_link_gbps != *meta.candidate_link_gbps;
  bool normalization_missing = false;
  if (c.normalize == Normalize::link_bandwidth) {
    if (links_known) {
      c.summary.normalization = *meta.baseline_link_gbps / *meta.candidate_link_gbps;
      c.summary.normalized = true;
    } else {
      normalization_missing = true;
      c.warnings.push_back(fmt::format(
          "normalisation by link bandwidth was asked for, but fabric.link_gbps is missing on the {}: the ratio "
          "cannot be normalised, so no claim verdict is possible (raw ratios shown)",
          !meta.baseline_link_gbps && !meta.candidate_link_gbps ? "baseline and candidate"
          : !meta.baseline_link_gbps                            ? "baseline"
                                                                : "candidate"));
    }
  } else if (links_differ) {
    c.warnings.push_back(fmt::format(
        "link bandwidth differs ({} vs {} Gbps): ratios are raw and include the {:.2f}x link; the summary also "
        "gives them normalised by link bandwidth (--normalize link_bandwidth to use those)",
        *meta.baseline_link_gbps, *meta.candidate_link_gbps, *meta.candidate_link_gbps / *meta.baseline_link_gbps));
  }
  for (const auto& w : meta.warnings) c.warnings.push_back(w);

  // Stage 3: statistics per size.
  c.rows.reserve(m.sizes.size());
  for (const auto& size : m.sizes) {
    c.rows.push_back(analyse_size(size, o.min_trials, o.alpha, c.summary.normalization));
  }
  c.summary.sizes = c.rows.size();

  // Across sizes, on trials: the geomean from each trial's mean over sizes (a t interval), the max
  // from simultaneous per-size t intervals (docs/compare.md "Method").
  if (!m.sizes.empty()) {
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
    const GeomeanEstimate g = geomean_shift(table);
    c.summary.geomean.ratio = std::exp(g.estimate);
    c.summary.geomean.shift = g.shift;
    // The max: the largest per-size trial-level estimate (biased upward by noise: the winner's curse,
    // see docs/compare.md), with an interval that covers the largest true ratio.
    std::vector<TShift> shifts;
    std::size_t argmax = 0;
    double best = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
      const auto& row = c.rows[i];
      const double est = row.trial_shift ? row.trial_shift->estimate : std::log(row.ratio_raw);
      if (est > best) {
        best = est;
        argmax = i;
      }
      if (row.trial_shift) shifts.push_back(*row.trial_shift);
    }
    c.summary.max.ratio = std::exp(best);
    c.summary.max.at = c.rows[argmax].key;
    auto exp_interval = [](std::pair<double, double> i) { return Interval{std::exp(i.first), std::exp(i.second)}; };
    if (g.shift && shifts.size() == c.rows.size()) {
      c.summary.ci_method = "t";
      c.summary.geomean.ci95 = exp_interval(g.shift->interval(0.95));
      c.summary.geomean.ci90 = exp_interval(g.shift->interval(0.90));
      c.summary.geomean.p_value = g.shift->p_two_sided();
      c.summary.max.ci95 = exp_interval(max_interval(shifts, 0.95));
      c.summary.max.ci90 = exp_interval(max_interval(shifts, 0.90));
    } else {
      c.warnings.push_back(
          "one trial (launch) on each side: launch-to-launch variation cannot be estimated, so there is no "
          "interval across sizes and no gate test; run separate launches (scripts/launches.sh) and compare the "
          "folders");
    }
    // Drift: each side's trial values against launch order.
    auto trend_of = [&](const std::vector<std::vector<double>>& side) -> std::optional<SideTrend> {
      const auto t = linear_trend(trial_deviations(side));
      if (!t) return std::nullopt;
      return SideTrend{t->slope, t->p_value, t->n, t->p_value < o.alpha / 10.0};
    };
    c.baseline.trend = trend_of(table.baseline);
    c.candidate.trend = trend_of(table.candidate);
    if (const auto t = common_trend(trial_deviations(table.baseline), trial_deviations(table.candidate))) {
      c.summary.drift = SideTrend{t->slope, t->p_value, t->n, t->p_value < o.alpha / 2.0};
    }
    const auto percent = [](double slope) { return (std::exp(slope) - 1.0) * 100.0; };
    if (c.summary.drift && c.summary.drift->detected) {
      c.warnings.push_back(fmt::format(
          "the launches drift ({:+.2f}% time per launch on both sides, trend p {:.2g}): launches are not "
          "exchangeable, so a difference between the sides may be the drift; alternate baseline and candidate "
          "launches (A B A B ...)",
          percent(c.summary.drift->slope_per_launch), c.summary.drift->p_value));
    }
    for (const auto* side : {&c.baseline, &c.candidate}) {
      if (side->trend && side->trend->detected) {
        c.warnings.push_back(fmt::format(
            "the {} drifts across its {} launches ({:+.2f}% time per launch, trend p {:.2g}): launches are not "
            "exchangeable, so a difference between the sides may be the drift; alternate baseline and candidate "
            "launches (A B A B ...)",
            side == &c.baseline ? "baseline" : "candidate", side->trend->trials, percent(side->trend->slope_per_launch),
            side->trend->p_value));
      }
    }
  }

  // Warnings about the data.
  side_warnings(baseline, c.rows, true, m.baseline_trials, o.min_trials, c.warnings);
  side_warnings(candidate, c.rows, false, m.candidate_trials, o.min_trials, c.warnings);
  if (!c.only_in_baseline.empty()) {
    c.warnings.push_back(fmt::format("{} size(s) only in the baseline (not compared): {}", c.only_in_baseline.size(),
                                     list_keys(c.only_in_baseline)));
  }
  if (!c.only_in_candidate.empty()) {
    c.warnings.push_back(fmt::format("{} size(s) only in the candidate (not compared): {}", c.only_in_candidate.size(),
                                     list_keys(c.only_in_candidate)));
  }

  // Verdict.
  if (!c.mismatches.empty() || !meta.requirement_failures.empty() || c.rows.empty()) {
    c.verdict = "not_comparable";
    c.exit_code = verdict_exit::not_comparable;
    std::vector<std::string> why;
    for (const auto& k : c.mismatches) {
      const auto it =
          std::find_if(c.differences.begin(), c.differences.end(), [&](const Difference& d) { return d.key == k; });
      why.push_back(fmt::format("{} differs ({} vs {}; --allow-mismatch {} to compare anyway)", k, it->baseline,
                                it->candidate, k));
    }
    for (const auto& f : meta.requirement_failures) why.push_back(f);
    if (c.rows.empty()) why.push_back("no size is present on both sides within the scope");
    c.reason = fmt::format("{}", fmt::join(why, "; "));
    return c;
  }
  if (o.gate) {
    apply_gate(c, *o.gate);
    return c;
  }
  if (o.claim) {
    const auto& s = c.summary.used();
    const double f = c.summary.normalization;
    auto scaled = [f](const std::optional<Interval>& i) -> std::optional<Interval> {
      if (!i) return std::nullopt;
      return Interval{i->first * f, i->second * f};
    };
    const int trials = std::min(m.baseline_trials, m.candidate_trials);
    ClaimDecision d = decide_claim(*o.claim, s.ratio * f, scaled(s.ci90), scaled(s.ci95), trials, o.min_trials);
    if (drift_detected(c) && d.verdict != "inconclusive") {
      d.reason = fmt::format("would be {}, but the launches drift (see warnings), which can decide it: {}", d.verdict,
                             d.reason);
      d.verdict = "inconclusive";
    }
    if (normalization_missing) {
      d.verdict = "inconclusive";
      d.reason = "the claim compares link-normalised ratios, but fabric.link_gbps is missing: " + d.reason;
    } else if (meta.requirement_unknown && d.verdict != "inconclusive") {
      d.reason =
          fmt::format("would be {}, but a claim requirement cannot be checked (see warnings): {}", d.verdict, d.reason);
      d.verdict = "inconclusive";
    }
    c.verdict = d.verdict;
    c.reason = d.reason;
    c.trials_needed = d.trials_needed;
    c.exit_code = d.verdict == "confirmed" ? verdict_exit::confirmed_or_pass
                  : d.verdict == "refuted" ? verdict_exit::refuted_or_regression
                                           : verdict_exit::inconclusive;
    return c;
  }
  c.verdict = "none";
  c.exit_code = 0;
  c.reason = "no claim and no gate: report only";
  return c;
}

bool drift_detected(const Comparison& c) {
  auto on = [](const std::optional<SideTrend>& t) { return t && t->detected; };
  return on(c.summary.drift) || on(c.baseline.trend) || on(c.candidate.trend);
}

Comparison compare_runs(const CompareOptions& options) {
  const Side baseline = load_side("baseline", options.baseline);
  const Side candidate = load_side("candidate", options.candidate);
  return compare_sides(baseline, candidate, options);
}

}  // namespace ccbench::compare
