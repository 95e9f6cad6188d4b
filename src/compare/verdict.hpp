// Claim verdicts by equivalence testing: confirmed when the 90% CI of the statistic lies inside
// expected +- tolerance (two one-sided tests at 5%); refuted when the 95% CI lies wholly outside;
// inconclusive otherwise (trials_needed.hpp estimates the launches that would decide it).
#pragma once

#include "compare/compare.hpp"

namespace ccbench::compare {

struct ClaimDecision {
  Verdict verdict = Verdict::inconclusive;  // confirmed | refuted | inconclusive
  std::string reason;
  std::optional<int> trials_needed;  // set when too few trials or no interval: min_trials
};

// `ratio`, `ci90` and `ci95` in the normalisation the claim asks for; `trials` the smaller side's
// trial count.
ClaimDecision decide_claim(const Claim& claim, double ratio, const std::optional<Interval>& ci90,
                           const std::optional<Interval>& ci95, int trials, int min_trials);

}  // namespace ccbench::compare
