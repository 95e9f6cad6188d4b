// Stage 3 of compare: per size, each side's median and CI, the ratio with its 95% CI
// (Hodges-Lehmann on log times), the Mann-Whitney p-value and the gate's per-size test.
#pragma once

#include <vector>

#include "compare/compare.hpp"

namespace ccbench::compare {

// One row per matched size, sorted as `matched.sizes`; `normalization` scales ratio and ci.
std::vector<RowResult> analyse(const Matched& matched, int min_trials, double alpha, double normalization);

// One size.
RowResult analyse_size(const MatchedSize& size, int min_trials, double alpha, double normalization);

}  // namespace ccbench::compare
