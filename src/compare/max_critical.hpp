// The max statistic's simultaneous critical value from resampled launches (docs/compare.md "Method").
//
// The lower bound of max_s theta_s must hold for every size at once. Instead of Bonferroni over the
// K sizes (as if their estimates were independent), the level comes from the joint distribution of
// the per-size estimates across launches: each launch's centred deviations (all sizes of that
// launch) are multiplied by one Gaussian weight (a wild bootstrap over whole launches, so the
// correlation a launch puts on every size is kept), and the quantile of the maximum of the
// standardised resampled estimates gives the one-sided normal level p at which every size's bound
// holds jointly. Each size's bound then uses its own t quantile at that level (t_{1-p}(df)): the
// small-sample correction, since 5 launches estimate each size's spread with few degrees of freedom.
// Deterministic for a seed: a fixed generator (mt19937_64) and our own normal transform.
#pragma once

#include <cstdint>
#include <vector>

#include "compare/trial_stats.hpp"

namespace ccbench::compare {

struct MaxCritical {
  std::vector<double> maxima;  // max over sizes of the standardised resampled estimates, ascending
  std::size_t sizes = 0;       // sizes with spread (the others cannot move)
  // The one-sided per-size normal level p with P(all K lower bounds at z_{1-p} hold) = 1 - tail,
  // clamped to [tail / K, tail] (never wider than Bonferroni, never narrower than one size alone);
  // tail / K (Bonferroni) without resamples.
  double per_size_level(double tail) const;
};

// From the log trial medians ([size][trial], NaN where a trial lacks the size): `resamples` draws,
// seeded by `seed`.
MaxCritical max_critical(const TrialLogs& logs, int resamples, std::uint64_t seed);

// The interval of max_s theta_s: lower = max_s (est_s - width_s(1 - lower_level)) with the
// simultaneous level of max_critical, upper = max_s (est_s + width_s(1 - upper_level)) (the true
// maximum's own size bounds it from above, so no multiplicity is needed there). Log space.
std::pair<double, double> max_interval(std::span<const TShift> sizes, double lower_level, double upper_level);

}  // namespace ccbench::compare
