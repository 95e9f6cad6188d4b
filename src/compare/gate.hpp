// The regression gate: a size fails when its slowdown is significant after Holm-Bonferroni across
// sizes and larger than the threshold; the geometric mean is one more member of the Holm family
// (its p-value from the trial bootstrap) and fails the same way.
#pragma once

#include "compare/compare.hpp"

namespace ccbench::compare {

// Fills rows[].p_holm/regression, comparison.gate_failures, geomean_regression, verdict and reason.
void apply_gate(Comparison& comparison, const Gate& gate);

}  // namespace ccbench::compare
