// Order statistics used by the sweep (stopping rule) and the result file (time_us summary).
// Why the median and an order-statistic CI: see docs/method.md.
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace ccbench::stats {

// Quantile with linear interpolation between order statistics (Hyndman-Fan type 7, the default of
// R and numpy). `sorted` must be ascending and non-empty; q in [0, 1].
double quantile_sorted(std::span<const double> sorted, double q);
double median_sorted(std::span<const double> sorted);
double mean(std::span<const double> values);

// Zero-based indices (lo, hi) of the order statistics that bound a distribution-free CI for the
// median: P(X(lo) <= median <= X(hi)) >= confidence, from the exact Binomial(n, 1/2) distribution
// (the narrowest such symmetric pair).
// For n too small to reach the confidence, returns (0, n-1).
std::pair<std::size_t, std::size_t> median_ci_indices(std::size_t n, double confidence);

struct Summary {
  std::size_t n = 0;
  double min = 0, median = 0, mean = 0, p99 = 0, max = 0;
  double ci_lo = 0, ci_hi = 0;  // 95% CI of the median
};

// Summary of unsorted values (copied and sorted internally).
Summary summarize(std::span<const double> values, double confidence = 0.95);

// Half-width of the median CI relative to the median: max(median-lo, hi-median) / median.
double relative_ci_halfwidth(const Summary& s);

// Binomial(n, 1/2) cumulative distribution P(X <= k), computed in log space (exact for n < 1e7).
double binomial_half_cdf(std::size_t n, std::size_t k);

}  // namespace ccbench::stats
