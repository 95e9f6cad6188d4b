// Claim verdicts by equivalence testing: confirmed when the 90% CI of the statistic lies inside
// expected +- tolerance (two one-sided tests at 5%); refuted when the 95% CI lies wholly outside;
// inconclusive otherwise, with an estimate of the trials that would decide it.
#pragma once

#include "compare/compare.hpp"

namespace ccbench::compare {

struct ClaimDecision {
  Verdict verdict = Verdict::inconclusive;  // confirmed | refuted | inconclusive
  std::string reason;
  std::optional<int> trials_needed;
};

// `ratio`, `ci90` and `ci95` in the normalisation the claim asks for; `trials` the smaller side's
// trial count.
ClaimDecision decide_claim(const Claim& claim, double ratio, const std::optional<Interval>& ci90,
                           const std::optional<Interval>& ci95, int trials, int min_trials);

// Trials per side for a CI of half-width `have_half` (log space, from `trials` trials) to shrink to
// `need_half`, assuming the 1/sqrt(trials) law.
int trials_for_halfwidth(int trials, double have_half, double need_half);

}  // namespace ccbench::compare
