// Two-sample statistics of the comparator: Mann-Whitney U test, the Hodges-Lehmann shift with its
// distribution-free (Mann-Whitney inversion) confidence interval, Holm-Bonferroni, and helpers.
// Why these and not a t-test: see docs/compare.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace ccbench::compare {

struct MannWhitney {
  double u_x = 0;        // U statistic of the first sample: #pairs x > y, ties counted 1/2
  double p_value = 1.0;  // two-sided
  bool exact = false;    // exact null distribution (no ties, small samples) or normal approximation
};

// Two-sided Mann-Whitney U test. Exact when there are no ties and n*m <= kExactMaxProduct; otherwise
// the normal approximation with tie correction and continuity correction (as scipy.stats.mannwhitneyu
// with method="asymptotic"). Empty inputs give p = 1.
inline constexpr std::size_t kExactMaxProduct = 2500;
MannWhitney mann_whitney(std::span<const double> x, std::span<const double> y);
MannWhitney mann_whitney_asymptotic(std::span<const double> x, std::span<const double> y);
MannWhitney mann_whitney_exact(std::span<const double> x, std::span<const double> y);

// P(U <= u) under the null for sample sizes n and m (no ties), exact.
double mann_whitney_exact_cdf(std::size_t n, std::size_t m, std::size_t u);

// The k-th smallest (1-based) of the n*m differences x_i - y_j, for ascending x and y, in
// O((n + m) log range) without materialising the pairs.
double kth_pairwise_difference(std::span<const double> x_sorted, std::span<const double> y_sorted, std::uint64_t k);

struct ShiftEstimate {
  double estimate = 0;  // Hodges-Lehmann: median of x_i - y_j
  // Distribution-free CI from inverting the Mann-Whitney test: [D(k), D(nm+1-k)] of the sorted
  // pairwise differences. Absent when the samples are too small to reach the confidence.
  std::optional<std::pair<double, double>> ci;
};

// Hodges-Lehmann shift of x relative to y with its confidence interval at `confidence`.
ShiftEstimate hodges_lehmann(std::span<const double> x, std::span<const double> y, double confidence);

// The 1-based rank k such that [D(k), D(nm+1-k)] is the Mann-Whitney interval; 0 when no interval
// reaches the confidence. Exact for small samples, normal approximation otherwise.
std::uint64_t mann_whitney_ci_rank(std::size_t n, std::size_t m, double confidence);

struct WelchT {
  double t = 0;
  double df = 0;
  double p_value = 1.0;  // two-sided
};

// Welch's two-sample t-test (unequal variances). Used by the regression gate on log trial medians,
// where the exact Mann-Whitney test on a handful of trials cannot reach a multiplicity-adjusted
// level (5 vs 5 trials: p >= 2/252). Needs at least 2 values a side (else p = 1).
WelchT welch_t_test(std::span<const double> x, std::span<const double> y);

// Upper tail P(T > t) of Student's t with df degrees of freedom (df > 0, real).
double student_t_sf(double t, double df);

// Regularized incomplete beta I_x(a, b).
double incomplete_beta(double x, double a, double b);

// Holm-Bonferroni step-down adjusted p-values (same order as the input).
std::vector<double> holm_adjust(std::span<const double> p_values);

// Standard normal upper tail and quantile.
double normal_sf(double z);
double normal_quantile(double p);

// Percentile of unsorted values (type 7), reorders `values`.
double percentile_inplace(std::vector<double>& values, double q);

}  // namespace ccbench::compare
