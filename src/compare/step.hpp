// `compare --statistic step` (docs/compare.md, "A replayed job's step"): the verdict on the step row
// of two sets of `ccbench replay` files. The step row is one key, so the comparison is compare's own
// on that key; what is added here is what makes the two sides one job's step: every file holds a
// step row and every file replayed the same trace (config.replay.trace_sha256).
#pragma once

#include <string>

#include "compare/claim.hpp"
#include "compare/load.hpp"
#include "compare/match.hpp"

namespace ccbench::compare {

// The trace's SHA-256 both sides replayed. Throws UsageError (exit 2) naming the first file without
// a step row, without the trace's digest, or replayed from another trace than the first baseline file.
std::string check_step_sides(const Side& baseline, const Side& candidate);

// The step row alone. Throws UsageError when the flags or the claim narrow the scope (--ops,
// --min-bytes, --max-bytes): the step row is the one key compared.
Scope step_scope(const Scope& flags, const Claim* claim);

}  // namespace ccbench::compare
