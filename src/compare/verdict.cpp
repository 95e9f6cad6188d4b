#include "compare/verdict.hpp"

#include <fmt/format.h>

namespace ccbench::compare {

ClaimDecision decide_claim(const Claim& claim, double ratio, const std::optional<Interval>& ci90,
                           const std::optional<Interval>& ci95, int trials, int min_trials) {
  ClaimDecision d;
  const double lo = claim.lower(), hi = claim.upper();
  const auto band = fmt::format("[{:.3f}, {:.3f}]", lo, hi);
  if (!ci90 || !ci95) {
    d.verdict = Verdict::inconclusive;
    d.reason = fmt::format("no confidence interval for the statistic (needs at least 2 trials per side; {} wanted)",
                           min_trials);
    d.trials_needed = min_trials;
    return d;
  }
  const bool inside = ci90->first >= lo && ci90->second <= hi;
  const bool above = ci95->first > hi;
  const bool below = ci95->second < lo;
  if (trials < min_trials) {
    d.verdict = Verdict::inconclusive;
    d.reason = fmt::format(
        "only {} trial(s) on the smaller side: trials are the independent unit and a verdict needs at least {} "
        "per side (ratio {:.3f}, claim band {})",
        trials, min_trials, ratio, band);
    d.trials_needed = min_trials;
  } else if (inside) {
    d.verdict = Verdict::confirmed;
    d.reason = fmt::format("90% CI [{:.3f}, {:.3f}] lies inside the claim band {}", ci90->first, ci90->second, band);
    return d;
  } else if (above || below) {
    d.verdict = Verdict::refuted;
    d.reason = fmt::format("95% CI [{:.3f}, {:.3f}] lies wholly {} the claim band {}", ci95->first, ci95->second,
                           above ? "above" : "below", band);
    return d;
  } else {
    d.verdict = Verdict::inconclusive;
    d.reason = fmt::format("90% CI [{:.3f}, {:.3f}] straddles the claim band {}", ci90->first, ci90->second, band);
  }
  return d;
}

}  // namespace ccbench::compare
