#include "compare/analyse.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "compare/statistics.hpp"
#include "compare/trial_stats.hpp"
#include "core/bandwidth.hpp"
#include "core/percentiles.hpp"
#include "core/stats.hpp"
#include "core/types.hpp"

namespace ccbench::compare {

namespace {

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
  if (s.percentile) {
    // --statistic pNN: the pooled pNN and its order-statistic interval (absent with too few samples).
    out.median_us = stats::quantile_sorted(s.pooled, *s.percentile / 100.0);
    if (const auto ci = percentiles::ci_indices(s.pooled.size(), *s.percentile); ci && !s.summary)
      out.ci_us = Interval{s.pooled[ci->first], s.pooled[ci->second]};
  } else if (!s.summary && s.pooled.size() >= 6) {
    // An order-statistic CI needs raw samples and n >= 6 to reach 95%; imported summaries get none.
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

}  // namespace

RowResult analyse_size(const MatchedSize& m, int min_trials, double alpha, double normalization) {
  RowResult r;
  r.key = m.key;
  r.baseline = describe_side(m.key, m.base);
  r.candidate = describe_side(m.key, m.cand);
  // Trials are the independent unit when both sides have enough of them; otherwise the pooled
  // samples are (and trial-to-trial variation goes unmeasured: a warning says so).
  const bool by_trials = m.base.trial_medians.size() >= static_cast<std::size_t>(min_trials) &&
                         m.cand.trial_medians.size() >= static_cast<std::size_t>(min_trials);
  r.unit = by_trials ? Unit::trials : Unit::samples;
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
  r.gate_test = !r.trial_shift                        ? GateTest::none
                : tb.size() >= 2 && tc.size() >= 2 ? GateTest::welch_t
                                                    : GateTest::pooled_t;
  r.p_gate = r.trial_shift ? r.trial_shift->p_two_sided() : 1.0;
  r.ratio = r.ratio_raw * normalization;
  if (r.ci_raw) r.ci = Interval{r.ci_raw->first * normalization, r.ci_raw->second * normalization};
  return r;
}

std::vector<RowResult> analyse(const Matched& matched, int min_trials, double alpha, double normalization) {
  std::vector<RowResult> rows;
  rows.reserve(matched.sizes.size());
  for (const auto& size : matched.sizes) rows.push_back(analyse_size(size, min_trials, alpha, normalization));
  return rows;
}

}  // namespace ccbench::compare
