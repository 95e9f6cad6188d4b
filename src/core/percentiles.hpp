// Percentiles of a row's per-iteration samples (`ccbench run --percentiles`) and their
// distribution-free confidence intervals: the definitions every writer and reader of a row's
// `percentiles_us` shares (docs/method.md "Percentiles").
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ccbench::percentiles {

// The confidence of every percentile's interval, as the median's.
inline constexpr double kConfidence = 0.95;

// A row's JSON key of a level given in percent: 99 -> "p99", 99.9 -> "p99.9", 50 -> "p50".
std::string key(double percent);

// "50,99,99.9" -> {50, 99, 99.9}, ascending, duplicates removed. Each level must be a finite number
// strictly between 0 and 100; anything else is a UsageError naming `flag`.
std::vector<double> parse_list(std::string_view text, std::string_view flag);

// The fewest samples from which a level has a point estimate that is not an extreme sample's
// interpolation: 1 / min(p, 1 - p) (p99.9: 1000, p50: 2).
std::size_t min_samples_for_estimate(double percent);

// The fewest samples for which the level's equal-tailed order-statistic interval exists at
// `confidence`: both (1 - p)^n and p^n at most (1 - confidence) / 2 (p50: 6, p99: 368, p99.9: 3688).
std::size_t min_samples_for_ci(double percent, double confidence = kConfidence);

// Zero-based order statistics (lo, hi) of the distribution-free interval for the p quantile of n
// samples: with B ~ Binomial(n, p) the samples below the quantile, lo is the largest index with
// P(B <= lo) <= alpha/2 and hi the smallest with P(B > hi) <= alpha/2, so [X(lo), X(hi)] covers it
// with probability >= confidence (for p = 1/2 the median's interval, stats::median_ci_indices).
// nullopt when n is too small for either end (n < min_samples_for_ci).
std::optional<std::pair<std::size_t, std::size_t>> ci_indices(std::size_t n, double percent,
                                                              double confidence = kConfidence);

// A row's `percentiles_us`: for each level its type-7 quantile (numpy's default) of `sorted`
// (ascending, non-empty) and its interval, or `ci95: null` with `ci_absent` saying why.
nlohmann::json to_json(std::span<const double> sorted, std::span<const double> levels_percent);

// Type-7 quantile of unsorted samples at a level in percent (copied and sorted).
double of_samples(std::span<const double> samples, double percent);

// Parses a `--statistic pNN` spelling ("p99", "p99.9") into its level in percent; nullopt when the
// text is not of that form (another statistic's name).
std::optional<double> parse_statistic(std::string_view text);

}  // namespace ccbench::percentiles
