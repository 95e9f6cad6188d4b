#include "compare/gate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

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
  std::vector<double> p;
  p.reserve(c.rows.size() + 1);
  std::size_t tested = 0;
  for (auto& r : c.rows) {
    r.p_gate = r.trial_shift ? r.trial_shift->p_below(bound) : 1.0;
    tested += r.trial_shift ? 1 : 0;
    p.push_back(r.p_gate);
  }
  const auto& g = c.summary.geomean;
  if (g.shift) p.push_back(g.shift->p_below(bound));
  const auto adjusted = holm_adjust(p);
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
  if (g.shift && !c.rows.empty() && adjusted.back() < gate.alpha) {
    c.geomean_regression = true;
    c.gate_failures.push_back(
        fmt::format("geomean over {} sizes is {:.1f}% slower (ratio {:.3f}{}, Holm-adjusted p {:.2g})", c.rows.size(),
                    (1.0 / geo - 1.0) * 100.0, geo,
                    g.ci95 ? fmt::format(", 95% CI [{:.3f}, {:.3f}]", g.ci95->first * f, g.ci95->second * f) : std::string(),
                    adjusted.back()));
  }
  const bool drift = drift_detected(c.summary);
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
  } else if (!c.gate_failures.empty() && drift) {
    c.verdict = Verdict::inconclusive;
    c.reason = fmt::format(
        "would be a regression ({}), but the launches drift (see warnings) and the drift alone can make a side "
        "slower; interleave baseline and candidate launches and compare again",
        fmt::join(c.gate_failures, "; "));
  } else if (c.gate_failures.empty()) {
    c.verdict = Verdict::pass;
    c.reason = fmt::format("no size is significantly {}", what);
  } else {
    c.verdict = Verdict::regression;
    c.reason = fmt::format("{} failure(s): {}", c.gate_failures.size(), fmt::join(c.gate_failures, "; "));
  }
}

}  // namespace ccbench::compare
