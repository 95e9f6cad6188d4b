// The regression gate: a size fails when its slowdown is significant after Holm-Bonferroni across
// sizes and larger than the threshold; the geometric mean fails when its slowdown exceeds the
// threshold and its 95% bootstrap CI lies below 1.
#pragma once

#include "compare/compare.hpp"

namespace ccbench::compare {

// Fills rows[].p_holm/regression, comparison.gate_failures, geomean_regression, verdict and exit code.
void apply_gate(Comparison& comparison, const Gate& gate);

}  // namespace ccbench::compare
