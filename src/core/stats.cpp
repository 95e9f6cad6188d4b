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
  // Largest k with P(X <= k-1) <= alpha/2: the CI is [X(k), X(n-1-k)] in zero-based order
  // statistics, whose coverage is 1 - 2 P(X <= k-1).
  // Start near the normal approximation and walk, so large n does not cost O(n^2).
  const double z = 1.959963984540054;  // only a starting point; the exact CDF decides
  const double approx = static_cast<double>(n) / 2.0 - z * std::sqrt(static_cast<double>(n)) / 2.0 - 2.0;
  std::size_t k = approx > 1.0 ? static_cast<std::size_t>(approx) : 0;
  if (k > 0 && binomial_half_cdf(n, k - 1) > alpha_half) k = 0;
  while (k + 1 <= n / 2 && binomial_half_cdf(n, k) <= alpha_half) ++k;
  if (k == 0) return {0, n - 1};
  return {k, n - 1 - k};
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
