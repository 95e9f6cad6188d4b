#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ccbench::stats {

double quantile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0.0;
  q = std::clamp(q, 0.0, 1.0);
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

double median_sorted(std::span<const double> sorted) { return quantile_sorted(sorted, 0.5); }

double mean(std::span<const double> values) {
  if (values.empty()) return 0.0;
  // Kahan-free pairwise-ish accumulation is unnecessary at these sizes; long double keeps 1e6
  // samples exact enough for a microsecond mean.
  long double sum = 0;
  for (double v : values) sum += v;
  return static_cast<double>(sum / static_cast<long double>(values.size()));
}

double binomial_half_cdf(std::size_t n, std::size_t k) {
  if (k >= n) return 1.0;
  // Sum of C(n, i) / 2^n for i <= k, accumulated in log space to stay finite for large n.
  const double log_half_n = -static_cast<double>(n) * std::log(2.0);
  const double lgn = std::lgamma(static_cast<double>(n) + 1.0);
  // Terms shrink geometrically away from the centre, so summing downwards from k can stop once
  // they no longer change the total: O(sqrt(n)) work instead of O(n).
  double total = 0.0;
  for (std::size_t i = k + 1; i-- > 0;) {
    const double log_term = lgn - std::lgamma(static_cast<double>(i) + 1.0) -
                            std::lgamma(static_cast<double>(n - i) + 1.0) + log_half_n;
    const double term = std::exp(log_term);
    total += term;
    if (term < total * 1e-17) break;
  }
  return std::min(total, 1.0);
}

std::pair<std::size_t, std::size_t> median_ci_indices(std::size_t n, double confidence) {
  if (n == 0) return {0, 0};
  const double alpha_half = (1.0 - confidence) / 2.0;
  // With B ~ Binomial(n, 1/2) the number of samples below the median, the zero-based order
  // statistics [X(j), X(n-1-j)] cover the median with probability 1 - 2 P(B <= j). Take the largest
  // j with P(B <= j) <= alpha/2 (the narrowest interval that keeps the coverage).
  if (binomial_half_cdf(n, 0) > alpha_half) return {0, n - 1};
  // Start just below the normal approximation and walk up, so large n costs O(sqrt(n)) per step.
  const double approx = static_cast<double>(n) / 2.0 - 1.959963984540054 * std::sqrt(static_cast<double>(n)) / 2.0 - 3.0;
  std::size_t j = approx > 0.0 ? static_cast<std::size_t>(approx) : 0;
  if (binomial_half_cdf(n, j) > alpha_half) j = 0;
  while (j + 1 <= (n - 1) / 2 && binomial_half_cdf(n, j + 1) <= alpha_half) ++j;
  return {j, n - 1 - j};
}

Summary summarize(std::span<const double> values, double confidence) {
  Summary s;
  s.n = values.size();
  if (values.empty()) return s;
  std::vector<double> sorted(values.begin(), values.end());
  std::ranges::sort(sorted);
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = median_sorted(sorted);
  s.mean = mean(sorted);
  s.p99 = quantile_sorted(sorted, 0.99);
  const auto [lo, hi] = median_ci_indices(sorted.size(), confidence);
  s.ci_lo = sorted[lo];
  s.ci_hi = sorted[hi];
  return s;
}

double relative_ci_halfwidth(const Summary& s) {
  if (!(s.median > 0.0)) return INFINITY;
  return std::max(s.median - s.ci_lo, s.ci_hi - s.median) / s.median;
}

}  // namespace ccbench::stats
