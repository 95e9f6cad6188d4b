// The sampling constants that the sampler (sweep/stopping_rule), the result file's config record
// and compare all mean the same thing by: one definition each.
#pragma once

namespace ccbench {

// The fewest samples of one size whose median confidence interval is trusted: `-n auto` takes at
// least this many, a CI target counts as met only from this many on, and compare refuses a size
// with fewer (docs/method.md).
inline constexpr int kMinSamplesPerSize = 10;

// The most samples `-n auto` takes of one size.
inline constexpr int kMaxSamplesPerSize = 100000;

}  // namespace ccbench
