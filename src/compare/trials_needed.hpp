// How many launches per side would likely decide an inconclusive claim (summary.trials_needed): the
// observed estimates kept, every standard error shrunk as 1/sqrt(launches) and the t degrees of
// freedom grown with them, the same decision rule applied again (for the max with the same
// simultaneous level: the correlation between sizes does not change with more launches). The drift's
// bias is left out: a drift is removed by alternating the sides' launches, not by more of them.
#pragma once

#include <optional>

#include "compare/compare.hpp"

namespace ccbench::compare {

// The smallest launch count per side (above the smaller side's, at least `min_trials`) at which the
// projected verdict is confirmed or refuted; nullopt when none up to kMaxTrialsNeeded does (the
// estimate sits on the band's edge) or there is no interval to project.
inline constexpr int kMaxTrialsNeeded = 1000;
std::optional<int> trials_to_decide(const Comparison& c, const Claim& claim, int min_trials);

}  // namespace ccbench::compare
