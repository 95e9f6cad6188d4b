#include "compare/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ccbench::compare {

int trials_for_halfwidth(int trials, double have_half, double need_half) {
  if (!(need_half > 0) || !std::isfinite(have_half)) return -1;
  const double t = std::max(trials, 1) * std::pow(have_half / need_half, 2.0);
  if (!(t < 1e6)) return -1;
  return static_cast<int>(std::ceil(t));
}

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
  // How many trials would decide it: shrink the CI (log space) until it fits inside the band when
  // the estimate is inside, or clears the band when it is outside.
  const double l = std::log(ratio);
  int need = -1;
  if (ratio >= lo && ratio <= hi) {
    const double room = std::min(l - std::log(lo), std::log(hi) - l);
    const double half90 = (std::log(ci90->second) - std::log(ci90->first)) / 2.0;
    need = trials_for_halfwidth(std::max(trials, 1), half90, room);
  } else {
    const double gap = ratio > hi ? l - std::log(hi) : std::log(lo) - l;
    const double half95 = (std::log(ci95->second) - std::log(ci95->first)) / 2.0;
    need = trials_for_halfwidth(std::max(trials, 1), half95, gap);
  }
  if (need > 0) {
    need = std::max(need, min_trials);
    d.trials_needed = need;
    if (need > trials) {
      d.reason += fmt::format("; about {} trials per side (have {}) would decide it", need, trials);
    }
  } else {
    d.reason += "; the estimate sits on the edge of the band, so more trials alone may not decide it";
  }
  return d;
}

}  // namespace ccbench::compare
