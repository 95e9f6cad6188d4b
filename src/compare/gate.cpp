#include "compare/gate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/statistics.hpp"

namespace ccbench::compare {

void apply_gate(Comparison& c, const Gate& gate) {
  // One Holm-Bonferroni family: every size plus the geomean, so the gate's false-positive rate
  // over A/A comparisons stays at or below alpha.
  std::vector<double> p;
  p.reserve(c.rows.size() + 1);
  for (const auto& r : c.rows) p.push_back(r.p_gate);
  const auto& g = c.summary.geomean_used;
  if (g.p_value) p.push_back(*g.p_value);
  const auto adjusted = holm_adjust(p);
  // A slowdown of s means time_cand = (1 + s) time_base, i.e. ratio = 1 / (1 + s).
  const double fail_below = 1.0 / (1.0 + gate.threshold);
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    auto& r = c.rows[i];
    r.p_holm = adjusted[i];
    r.regression = adjusted[i] < gate.alpha && r.ratio < fail_below;
    if (r.regression) {
      c.gate_failures.push_back(fmt::format("{} is {:.1f}% slower (ratio {:.3f}, Holm-adjusted p {:.2g})",
                                            format_key(r.key), (1.0 / r.ratio - 1.0) * 100.0, r.ratio, adjusted[i]));
    }
  }
  const double geo = g.ratio;
  if (g.p_value && !c.rows.empty() && geo < fail_below && adjusted.back() < gate.alpha) {
    c.geomean_regression = true;
    c.gate_failures.push_back(
        fmt::format("geomean over {} sizes is {:.1f}% slower (ratio {:.3f}{}, Holm-adjusted p {:.2g})", c.rows.size(),
                    (1.0 / geo - 1.0) * 100.0, geo,
                    g.ci95 ? fmt::format(", 95% CI [{:.3f}, {:.3f}]", g.ci95->first, g.ci95->second) : std::string(),
                    adjusted.back()));
  }
  if (c.gate_failures.empty()) {
    c.verdict = Verdict::pass;
    c.reason = fmt::format("no size is significantly (Holm-Bonferroni, alpha {}) more than {:.1f}% slower", gate.alpha,
                           gate.threshold * 100.0);
  } else {
    c.verdict = Verdict::regression;
    c.reason = fmt::format("{} failure(s): {}", c.gate_failures.size(), fmt::join(c.gate_failures, "; "));
  }
}

}  // namespace ccbench::compare
