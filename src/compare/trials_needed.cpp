#include "compare/trials_needed.hpp"

#include <algorithm>
#include <cmath>

#include "compare/max_critical.hpp"
#include "compare/verdict.hpp"

namespace ccbench::compare {

namespace {

// A shift as it would be with `n` launches a side: se scaled from the sides' counts, and the
// pooled-variance df (2n - 2) for both tests (Welch's df grows the same way; one df keeps the
// projection cheap).
TShift projected(const TShift& s, double scale, double df) {
  TShift p;
  p.estimate = s.estimate;
  p.se = std::max(s.se, s.se_alt) * scale;
  p.df = df;
  return p;
}

Interval exp_interval(std::pair<double, double> i, double f) { return {std::exp(i.first) * f, std::exp(i.second) * f}; }

}  // namespace

std::optional<int> trials_to_decide(const Comparison& c, const Claim& claim, int min_trials) {
  const auto& s = c.summary;
  const double nb = c.baseline.trials, nc = c.candidate.trials;
  const int have = static_cast<int>(std::min(nb, nc));
  const bool max = s.statistic == Statistic::max;
  if (s.ci_method != CiMethod::t || (!max && !s.geomean.shift)) return std::nullopt;
  for (const auto& r : c.rows) {
    if (!r.trial_shift) return std::nullopt;
  }
  // The max's per-size estimates as its interval uses them (the spread rule's).
  const std::vector<TShift>& sizes = s.max_shifts;
  const double f = s.normalization;
  const double ratio = s.used_normalised().ratio;
  auto decisive = [&](int n) {
    const double scale = std::sqrt((2.0 / n) / (1.0 / nb + 1.0 / nc)), df = 2.0 * n - 2.0;
    Interval ci90, ci95;
    // The rule's levels at that look (sequential: the boundary at n launches a side).
    const double tail95 = s.looks.per_look_at(0.025, n), tail90 = s.looks.per_look_at(0.05, n);
    if (max) {
      std::vector<TShift> p;
      p.reserve(sizes.size());
      for (const auto& t : sizes) p.push_back(projected(t, scale, df));
      // The simultaneous level over sizes, then spread over the looks (as in summarise).
      const bool once = s.looks.looks == Looks::once;
      const double lower95 = once ? s.max_lower_level95 : s.looks.per_look_at(s.max_one_look_level95, n);
      const double lower90 = once ? s.max_lower_level90 : s.looks.per_look_at(s.max_one_look_level90, n);
      ci95 = exp_interval(max_interval(p, lower95, tail95), f);
      ci90 = exp_interval(max_interval(p, lower90, tail90), f);
    } else {
      const TShift p = projected(*s.geomean.shift, scale, df);
      ci95 = exp_interval(p.interval(1.0 - 2.0 * tail95), f);
      ci90 = exp_interval(p.interval(1.0 - 2.0 * tail90), f);
    }
    return decide_claim(claim, ratio, ci90, ci95, n, min_trials).verdict != Verdict::inconclusive;
  };
  // Every count up to twice the present one, then 10% steps; the first decisive one.
  int n = std::max(have + 1, std::max(min_trials, 2));
  while (n <= kMaxTrialsNeeded) {
    if (decisive(n)) return n;
    n = n < 2 * have ? n + 1 : std::max(n + 1, static_cast<int>(std::ceil(n * 1.1)));
  }
  return std::nullopt;
}

}  // namespace ccbench::compare
