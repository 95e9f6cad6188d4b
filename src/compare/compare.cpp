#include "compare/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "compare/bootstrap.hpp"
#include "compare/gate.hpp"
#include "compare/load.hpp"
#include "compare/statistics.hpp"
#include "compare/verdict.hpp"
#include "core/sampling.hpp"
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

constexpr auto kMinSamples = static_cast<std::size_t>(kMinSamplesPerSize);  // the sampler's own minimum per size

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
  if (by_trials) {
    r.p_gate = welch_t_test(x, y).p_value;
    r.gate_test = "welch_t";
  } else {
    r.p_gate = mw.p_value;
    r.gate_test = "mann_whitney";
  }
  r.ratio = r.ratio_raw * normalization;
  if (r.ci_raw) r.ci = Interval{r.ci_raw->first * normalization, r.ci_raw->second * normalization};
  return r;
}

std::optional<Interval> percentile_ci(std::vector<double> replicates, double confidence) {
  if (replicates.empty()) return std::nullopt;
  const double a = (1.0 - confidence) / 2.0;
  const double lo = percentile_inplace(replicates, a);
  const double hi = percentile_inplace(replicates, 1.0 - a);
  return Interval{std::exp(lo), std::exp(hi)};
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
  c.baseline = {baseline.inputs, baseline.files.size(), m.baseline_trials, std::nullopt};
  c.candidate = {candidate.inputs, candidate.files.size(), m.candidate_trials, std::nullopt};

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

  // Across sizes: bootstrap over whole trials.
  if (!m.sizes.empty()) {
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
    const bool resamplable = m.baseline_trials >= 2 && m.candidate_trials >= 2;
    const TrialEstimates est = bootstrap_trials(table, resamplable ? o.resamples : 0, o.seed);
    c.summary.geomean.ratio = std::exp(est.geomean_log);
    c.summary.max.ratio = std::exp(est.max_log);
    c.summary.max.at = m.sizes[est.argmax].key;
    if (resamplable && o.resamples > 0) {
      c.summary.ci_method = "bootstrap";
      c.summary.geomean.ci95 = percentile_ci(est.geomean_replicates, 0.95);
      c.summary.geomean.ci90 = percentile_ci(est.geomean_replicates, 0.90);
      c.summary.max.ci95 = percentile_ci(est.max_replicates, 0.95);
      c.summary.max.ci90 = percentile_ci(est.max_replicates, 0.90);
      // Percentile-bootstrap p-value of "geomean ratio = 1", consistent with the interval.
      std::size_t below = 0, above = 0;
      for (double v : est.geomean_replicates) {
        below += v <= 0.0 ? 1 : 0;
        above += v >= 0.0 ? 1 : 0;
      }
      const double r = static_cast<double>(est.geomean_replicates.size());
      c.summary.geomean.p_value = std::min(1.0, 2.0 * (static_cast<double>(std::min(below, above)) + 1.0) / (r + 1.0));
    } else {
      // Fewer than 2 trials on a side: whole trials cannot be resampled. The geomean's interval then
      // comes from the per-size intervals (normal approximation in log space, sizes independent);
      // that ignores trial-to-trial variation, which a warning says.
      const double z95 = normal_quantile(0.975), z90 = normal_quantile(0.95);
      double var = 0, mean = 0;
      bool all = true;
      for (const auto& row : c.rows) {
        if (!row.ci_raw) {
          all = false;
          break;
        }
        const double se = (std::log(row.ci_raw->second) - std::log(row.ci_raw->first)) / (2.0 * z95);
        var += se * se;
        mean += std::log(row.ratio_raw);
      }
      if (all && !c.rows.empty()) {
        const double n = static_cast<double>(c.rows.size());
        mean /= n;
        const double se = std::sqrt(var) / n;
        c.summary.ci_method = "per-size";
        c.summary.geomean.ratio = std::exp(mean);
        c.summary.geomean.ci95 = Interval{std::exp(mean - z95 * se), std::exp(mean + z95 * se)};
        c.summary.geomean.ci90 = Interval{std::exp(mean - z90 * se), std::exp(mean + z90 * se)};
        c.summary.geomean.p_value = se > 0 ? std::min(1.0, 2.0 * normal_sf(std::abs(mean) / se)) : 1.0;
        const auto best = std::max_element(c.rows.begin(), c.rows.end(), [](const RowResult& a, const RowResult& b) {
          return a.ratio_raw < b.ratio_raw;
        });
        c.summary.max.ratio = best->ratio_raw;
        c.summary.max.at = best->key;
        c.summary.max.ci95 = best->ci_raw;
      }
      c.warnings.push_back(
          "fewer than 2 trials on a side: the across-size CI cannot resample whole trials; it comes from the "
          "per-size CIs (assuming independent sizes), or is unavailable where those are");
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

Comparison compare_runs(const CompareOptions& options) {
  const Side baseline = load_side("baseline", options.baseline);
  const Side candidate = load_side("candidate", options.candidate);
  return compare_sides(baseline, candidate, options);
}

}  // namespace ccbench::compare
