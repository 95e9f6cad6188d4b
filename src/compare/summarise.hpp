// Stage 4 of compare: across sizes. The geometric mean and the max of the per-size ratios with
// their intervals (a bootstrap over whole trials, or from the per-size CIs when a side has fewer
// than 2 trials), and the warnings about the data (partial runs, few trials or samples, imported
// summaries, CI targets not met, failed data checks, sizes on one side only).
#pragma once

#include <string>
#include <vector>

#include "compare/compare.hpp"

namespace ccbench::compare {

// Fills summary.geomean, summary.max, summary.ci_method and summary.sizes (the other fields are
// the caller's); may append a warning.
void summarise(const Matched& matched, const std::vector<RowResult>& rows, int resamples, std::uint64_t seed,
               Summary& summary, std::vector<std::string>& warnings);

// Warnings about both sides' data, in the order they are printed.
void data_warnings(const Comparison& comparison, const Side& baseline, const Side& candidate, int min_trials,
                   std::vector<std::string>& warnings);

// "allreduce 64M, allreduce 128M and 3 more".
std::string list_keys(const std::vector<RowKey>& keys, std::size_t limit = 6);

}  // namespace ccbench::compare
