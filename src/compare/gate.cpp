#include "compare/gate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "compare/statistics.hpp"

namespace ccbench::compare {

void apply_gate(Comparison& c, const Gate& gate) {
  // H0 at each size: slowdown <= threshold, i.e. log ratio >= -log(1 + threshold) in the
  // normalisation in use (raw log ratio + log f). A size fails when the one-sided t test on trials
  // rejects H0 after Holm-Bonferroni over all sizes plus the geomean: the probability of any false
  // failure is at most alpha whenever no size is truly slower than the threshold.
  const double f = c.summary.normalization;
  const double bound = -std::log1p(gate.threshold) - std::log(f);
  const auto& g = c.summary.geomean;
  // Under --statistic step the geomean is over the step row alone: the same test, counted once.
  const bool geomean_tested = c.summary.statistic != Statistic::step;
  // Holm-adjusted p-values of "slower than exp(-b)" at every size, then the geomean.
  auto adjusted_at = [&](double b) {
    std::vector<double> p;
    p.reserve(c.rows.size() + 1);
    // Under the sequential rule each p-value is first made sequential (the chance that a test asked
    // at every look would ever see one this small); Holm over those keeps alpha over sizes and looks.
    const LookRule& looks = c.summary.looks;
    for (const auto& r : c.rows) p.push_back(r.trial_shift ? looks.p_value(r.trial_shift->p_below(b)) : 1.0);
    if (g.shift && geomean_tested) p.push_back(looks.p_value(g.shift->p_below(b)));
    return holm_adjust(p);
  };
  std::size_t tested = 0;
  for (auto& r : c.rows) {
    r.p_gate = r.trial_shift ? r.trial_shift->p_below(bound) : 1.0;
    tested += r.trial_shift ? 1 : 0;
  }
  const auto adjusted = adjusted_at(bound);
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    auto& r = c.rows[i];
    r.p_holm = adjusted[i];
    r.regression = r.trial_shift && adjusted[i] < gate.alpha;
    if (r.regression) {
      c.gate_failures.push_back(fmt::format("{} is {:.1f}% slower (ratio {:.3f}, Holm-adjusted p {:.2g})",
                                            format_key(r.key), (1.0 / r.ratio - 1.0) * 100.0, r.ratio, adjusted[i]));
    }
  }
  const double geo = g.ratio * f;
  if (g.shift && geomean_tested && !c.rows.empty() && adjusted.back() < gate.alpha) {
    c.geomean_regression = true;
    c.gate_failures.push_back(fmt::format(
        "geomean over {} sizes is {:.1f}% slower (ratio {:.3f}{}, Holm-adjusted p {:.2g})", c.rows.size(),
        (1.0 / geo - 1.0) * 100.0, geo,
        g.ci95 ? fmt::format(", 95% CI [{:.3f}, {:.3f}]", g.ci95->first * f, g.ci95->second * f) : std::string(),
        adjusted.back()));
  }
  // A detected drift makes the gate inconclusive only where it can explain the failures: some size
  // must still be slower than the threshold plus the largest bias the drift can put between the sides.
  const double drift_bias = drift_bias_log(c);
  std::size_t beyond_drift = 0;
  if (drift_detected(c.summary) && !c.gate_failures.empty()) {
    for (const double p : adjusted_at(bound - drift_bias)) beyond_drift += p < gate.alpha ? 1 : 0;
  }
  const std::string what =
      fmt::format("more than {:.1f}% slower (one-sided t tests on trials, Holm-Bonferroni, alpha {})",
                  gate.threshold * 100.0, gate.alpha);
  if (tested == 0) {
    c.verdict = Verdict::inconclusive;
    c.trials_needed = std::max(c.min_trials, 2);
    c.reason = fmt::format(
        "one trial (launch) on each side: launch-to-launch variation is unknown, so no size can be tested for being "
        "{}; at least 2 launches on one side are needed, {} per side recommended",
        what, *c.trials_needed);
  } else if (!c.gate_failures.empty() && drift_detected(c.summary) && beyond_drift == 0) {
    c.verdict = Verdict::inconclusive;
    c.drift_changed_verdict = true;
    c.trials_needed = std::max({c.min_trials, c.baseline.trials, c.candidate.trials});
    c.reason = fmt::format(
        "would be a regression ({}), but the launches drift (see warnings) by up to {:.2f}% between the sides, "
        "which alone can make a side that slower; about {} launches per side with baseline and candidate "
        "alternating (A B A B ...) would decide it",
        fmt::join(c.gate_failures, "; "), (std::exp(drift_bias) - 1.0) * 100.0, *c.trials_needed);
  } else if (!c.gate_failures.empty() && drift_detected(c.summary)) {
    c.verdict = Verdict::regression;
    c.reason = fmt::format(
        "{} failure(s): {} (the launches drift, see warnings, but {} test(s) fail even with the threshold raised by "
        "the drift's largest bias between the sides, {:.2f}%)",
        c.gate_failures.size(), fmt::join(c.gate_failures, "; "), beyond_drift, (std::exp(drift_bias) - 1.0) * 100.0);
  } else if (c.gate_failures.empty()) {
    c.verdict = Verdict::pass;
    c.reason = fmt::format("no size is significantly {}", what);
  } else {
    c.verdict = Verdict::regression;
    c.reason = fmt::format("{} failure(s): {}", c.gate_failures.size(), fmt::join(c.gate_failures, "; "));
  }
}

}  // namespace ccbench::compare
