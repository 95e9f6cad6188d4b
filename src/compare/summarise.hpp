// Stage 4 of compare: across sizes, on trials. The geometric mean and the max of the per-size ratios
// with their t intervals (the max's holds for all sizes at once), the drift across launches, and the
// warnings about the data (partial runs, few trials or samples, imported summaries, CI targets not
// met, failed data checks, sizes on one side only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compare/compare.hpp"

namespace ccbench::compare {

// The false-flag budget of the three drift tests together (docs/compare.md "Drift").
inline constexpr double kDriftFlagRate = 0.01;

struct SummaryOptions {
  int resamples = 10000;  // of the max's simultaneous level
  std::uint64_t seed = 0;
  Spread spread = Spread::moderated;  // of the max's per-size bounds
};

// Fills summary.geomean, summary.max (and its simultaneous levels), summary.ci_method, summary.sizes
// and the trends (the other fields are the caller's); may append warnings.
void summarise(const Matched& matched, const std::vector<RowResult>& rows, const SummaryOptions& options,
               Summary& summary, std::vector<std::string>& warnings);

// Warnings about both sides' data, in the order they are printed.
void data_warnings(const Comparison& comparison, const Side& baseline, const Side& candidate, int min_trials,
                   std::vector<std::string>& warnings);

// "allreduce 64M, allreduce 128M and 3 more".
std::string list_keys(const std::vector<RowKey>& keys, std::size_t limit = 6);

}  // namespace ccbench::compare
