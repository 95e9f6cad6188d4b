#include "sweep/stopping_rule.hpp"

#include <algorithm>
#include <cmath>

#include "core/stats.hpp"

namespace ccbench {

int first_round(const StoppingRule& rule) {
  if (rule.iters) return std::clamp(*rule.iters, 1, 1000);
  return rule.min_samples;
}

StopDecision decide(const StoppingRule& rule, std::span<const double> samples, double elapsed_s,
                    double sample_cost_s) {
  StopDecision d;
  const auto n = static_cast<int>(samples.size());
  const stats::Summary s = stats::summarize(samples);
  d.ci_met = n >= rule.min_samples && stats::relative_ci_halfwidth(s) <= rule.target_ci;
  if (rule.iters) {
    d.stop = n >= *rule.iters;
    d.next_round = std::clamp(*rule.iters - n, 0, 1000);
    return d;
  }
  if (n < rule.min_samples) {
    d.next_round = rule.min_samples - n;
    return d;
  }
  if (d.ci_met || elapsed_s >= rule.max_time_s || n >= rule.max_samples) {
    d.stop = true;
    return d;
  }
  // Grow rounds geometrically (fewer decisions for cheap ops), but never past the time left.
  int round = std::clamp(n / 2, rule.min_samples, 1000);
  if (sample_cost_s > 0) {
    const double left = rule.max_time_s - elapsed_s;
    // In double until clamped: a long time left over a tiny sample cost exceeds int (a cast of
    // such a double is undefined and gave rounds of 1 sample).
    const double fit = std::floor(left / sample_cost_s);
    round = fit >= static_cast<double>(round) ? round : std::max(1, static_cast<int>(fit));
  }
  d.next_round = std::min(round, rule.max_samples - n);
  return d;
}

}  // namespace ccbench
