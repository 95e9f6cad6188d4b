// The regression gate: one-sided t tests on trials of "slower than the threshold" (time_cand >
// (1 + threshold) time_base) at each size and for the geometric mean, one Holm-Bonferroni family;
// inconclusive (exit 4) where the data cannot support a test (one launch a side) or the launches
// drift. See docs/compare.md "Regression gate".
#pragma once

#include "compare/compare.hpp"

namespace ccbench::compare {

// Fills rows[].p_gate/p_holm/regression, comparison.gate_failures, geomean_regression, verdict,
// reason and trials_needed.
void apply_gate(Comparison& comparison, const Gate& gate);

}  // namespace ccbench::compare
