// The max statistic's per-size spreads moderated toward a spread shared by the sizes (docs/compare.md
// "Asking again", "The spread"). Each size's launch-to-launch variance estimated from its own 5-20
// launches has 4-19 degrees of freedom, and the largest of K per-size upper bounds carries the tail
// of the worst estimate; the sizes of one comparison share the machine, so their variances carry
// information about each other. Empirical Bayes (Smyth 2004, the moderated t of limma): the sizes'
// sample variances s_k^2 (d_k df) are modelled as scaled chi-square draws around variances that are
// themselves drawn from a scaled inverse chi-square with d0 df and scale s0^2; d0 and s0^2 come from
// the sample variances by the method of moments on log s_k^2, and each size's variance becomes
//   s~_k^2 = (d0 s0^2 + d_k s_k^2) / (d0 + d_k)  with d0 + d_k degrees of freedom.
// d0 = 0 (no information shared) is the per-size t; d0 = infinity (the variances no more spread than
// sampling alone explains) is s0^2 for every size. A noisy size keeps a larger variance.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "compare/trial_stats.hpp"

namespace ccbench::compare {

// per_size: each size's t from its own launches; moderated: shrunk toward the sizes' shared spread.
enum class Spread { per_size, moderated };
std::string_view name(Spread spread);  // "per-size", "moderated"
std::optional<Spread> parse_spread(std::string_view text);

// psi(x), psi'(x) and psi''(x) for x > 0 (recurrence up to x >= 6, then the asymptotic series).
double digamma(double x);
double trigamma(double x);
double tetragamma(double x);
// The y > 0 with trigamma(y) = x (x > 0), by Newton's method on 1 / trigamma as limma does.
double inverse_trigamma(double x);

// The prior of the sizes' variances: d0 degrees of freedom (0: none, infinity: all sizes share s0^2)
// and scale s0^2.
struct SpreadPrior {
  double df = 0;
  double variance = 0;
};

// From the sizes' sample variances and their degrees of freedom (equal lengths): the method of
// moments on log s^2 (E log s^2 = log s0^2 + psi(d0/2) - log(d0/2) + log(d/2) - psi(d/2), Var log
// s^2 = psi'(d0/2) + psi'(d/2)). df 0 (the per-size t) with fewer than 2 sizes or a zero variance.
SpreadPrior estimate_prior(std::span<const double> variances, std::span<const double> dfs);

// A sample variance moderated by the prior, and its degrees of freedom.
struct ModeratedVariance {
  double variance = 0;
  double df = 0;
};
ModeratedVariance moderate(const SpreadPrior& prior, double variance, double df);

// Every size's shift as t_shift gives it, with each side's variance (Welch) and the pooled variance
// (the pooled t) moderated over the sizes, each by its own prior; Welch-Satterthwaite then combines
// the sides' moderated variances with their moderated df. nullopt where t_shift has none. The
// per-size t (t_shift itself) under Spread::per_size.
struct ModeratedShifts {
  std::vector<std::optional<TShift>> sizes;
  SpreadPrior baseline, candidate, pooled;
};
ModeratedShifts moderated_shifts(const TrialLogs& logs, Spread spread);

}  // namespace ccbench::compare
