#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "compare/max_critical.hpp"
#include "compare/statistics.hpp"
#include "compare/trial_stats.hpp"

namespace ccbench::compare {
namespace {

TEST(Statistics, KthPairwiseDifferenceMatchesBruteForce) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 50; ++round) {
    const std::size_t n = 1 + rng() % 30, m = 1 + rng() % 30;
    std::vector<double> x(n), y(m);
    // Rounded values make ties, which the bisection must still resolve exactly.
    for (auto& v : x) v = std::round(std::normal_distribution<double>(5, 2)(rng) * 4) / 4;
    for (auto& v : y) v = std::round(std::normal_distribution<double>(5, 2)(rng) * 4) / 4;
    std::vector<double> d;
    for (double a : x) {
      for (double b : y) d.push_back(a - b);
    }
    std::sort(d.begin(), d.end());
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    for (std::uint64_t k = 1; k <= d.size(); k += 1 + d.size() / 17) {
      EXPECT_DOUBLE_EQ(kth_pairwise_difference(x, y, k), d[k - 1]) << "k=" << k;
    }
    EXPECT_DOUBLE_EQ(kth_pairwise_difference(x, y, d.size()), d.back());
  }
}

TEST(Statistics, ExactDistributionIsAProbabilityAndSymmetric) {
  for (auto [n, m] : {std::pair{5u, 5u}, std::pair{3u, 9u}, std::pair{12u, 7u}}) {
    const std::size_t nm = n * m;
    EXPECT_NEAR(mann_whitney_exact_cdf(n, m, nm), 1.0, 1e-12);
    for (std::size_t u = 0; u < nm; ++u) {
      // P(U <= u) = P(U >= nm - u) = 1 - P(U <= nm - u - 1)
      EXPECT_NEAR(mann_whitney_exact_cdf(n, m, u), 1.0 - mann_whitney_exact_cdf(n, m, nm - u - 1), 1e-12);
    }
  }
  // 5 vs 5: P(U <= 3) = 7/252.
  EXPECT_NEAR(mann_whitney_exact_cdf(5, 5, 3), 7.0 / 252.0, 1e-15);
}

TEST(Statistics, MannWhitneySeparatedSamples) {
  std::vector<double> x = {10, 11, 12, 13, 14}, y = {1, 2, 3, 4, 5};
  const auto r = mann_whitney(x, y);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u_x, 25);
  EXPECT_NEAR(r.p_value, 2.0 / 252.0, 1e-15);
  const auto same = mann_whitney(x, x);
  EXPECT_NEAR(same.p_value, 1.0, 1e-12);
}

TEST(Statistics, HodgesLehmannOfIdenticalSamplesIsZero) {
  std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8};
  const auto r = hodges_lehmann(x, x, 0.95);
  EXPECT_DOUBLE_EQ(r.estimate, 0.0);
  ASSERT_TRUE(r.ci.has_value());
  EXPECT_LE(r.ci->first, 0.0);
  EXPECT_GE(r.ci->second, 0.0);
  // Too small for any 95% interval: 2 vs 2 (P(U = 0) = 1/6 > 2.5%).
  EXPECT_FALSE(hodges_lehmann(std::vector<double>{1, 2}, std::vector<double>{3, 4}, 0.95).ci.has_value());
}

TEST(Statistics, HolmMatchesHandComputation) {
  const std::vector<double> p = {0.01, 0.04, 0.03, 0.005};
  const auto a = holm_adjust(p);
  EXPECT_NEAR(a[0], 0.03, 1e-15);
  EXPECT_NEAR(a[1], 0.06, 1e-15);
  EXPECT_NEAR(a[2], 0.06, 1e-15);
  EXPECT_NEAR(a[3], 0.02, 1e-15);
}

TEST(Statistics, NormalQuantile) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-9);
  EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-12);
}

// Hand-computed: sizes s0, s1; baseline trials (1.0, 1.2, 1.1) and (2.0, 2.2, 2.1), candidate
// (0.9, 1.1) and (1.8, 2.0) (log times). Per-size differences 0.1 and 0.2, geomean 0.15. Trial
// deviations: baseline (-0.1, 0.1, 0), candidate (-0.1, 0.1); Welch: v_b = 0.01/3, v_c = 0.02/2,
// se = sqrt(0.013333) = 0.11547, df = se^4 / (v_b^2/2 + v_c^2/1) = 1.68421.
TEST(TrialStats, GeomeanShiftByHand) {
  TrialLogs t;
  t.baseline = {{1.0, 1.2, 1.1}, {2.0, 2.2, 2.1}};
  t.candidate = {{0.9, 1.1}, {1.8, 2.0}};
  const auto g = geomean_shift(t);
  EXPECT_NEAR(g.estimate, 0.15, 1e-12);
  ASSERT_TRUE(g.shift.has_value());
  EXPECT_NEAR(g.shift->se, std::sqrt(0.01 / 3 + 0.01), 1e-12);
  EXPECT_NEAR(g.shift->df, 1.0 / 0.59375, 1e-9);  // (0.04/3)^2 / ((0.01/3)^2/2 + 0.01^2)
  const auto dev = trial_deviations(t.baseline);
  ASSERT_EQ(dev.size(), 3u);
  EXPECT_NEAR(dev[0], -0.1, 1e-12);
  EXPECT_NEAR(dev[1], 0.1, 1e-12);
  EXPECT_NEAR(dev[2], 0.0, 1e-12);
  // A trial missing a size still counts, with the sizes it has.
  t.baseline[1][2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NEAR(trial_deviations(t.baseline)[2], 0.0, 1e-12);
  // One trial on each side: no variance estimate.
  EXPECT_FALSE(t_shift(std::vector<double>{1.0}, std::vector<double>{2.0}).has_value());
}

// [max of the lower bounds at the simultaneous level, max of the upper bounds at a / 2] of two sizes
// with known t parameters.
TEST(TrialStats, MaxIntervalByHand) {
  const std::vector<TShift> s = {{0.10, 0.01, 1e9}, {0.12, 0.02, 1e9}};  // df -> normal
  const auto [lo, hi] = max_interval(s, 0.05 / 4, 0.025);
  const double z_lo = normal_quantile(1 - 0.05 / 4), z_up = normal_quantile(0.975);
  EXPECT_NEAR(lo, std::max(0.10 - z_lo * 0.01, 0.12 - z_lo * 0.02), 1e-6);
  EXPECT_NEAR(hi, std::max(0.10 + z_up * 0.01, 0.12 + z_up * 0.02), 1e-6);
}

// The simultaneous level: sizes that move exactly together need no multiplicity (one size's level);
// no resampling falls back to Bonferroni; a fixed seed gives the same level twice.
TEST(TrialStats, MaxSimultaneousLevel) {
  TrialLogs together;
  for (double k : {1.0, 2.0, 3.0}) {
    together.baseline.push_back({0.01 * k, -0.02 * k, 0.0, 0.03 * k, -0.01 * k});
    together.candidate.push_back({0.02 * k, 0.0, -0.01 * k, -0.01 * k, 0.0});
  }
  const auto one = max_critical(together, 20000, 3);
  EXPECT_EQ(one.sizes, 3u);
  EXPECT_NEAR(one.per_size_level(0.025), 0.025, 0.0015);
  EXPECT_DOUBLE_EQ(max_critical(together, 0, 3).per_size_level(0.025), 0.025 / 3);
  TrialLogs apart = together;
  apart.baseline[1] = {0.03, 0.01, -0.02, 0.0, -0.02};
  apart.candidate[2] = {-0.01, 0.02, 0.0, 0.01, -0.02};
  const auto a = max_critical(apart, 5000, 9), b = max_critical(apart, 5000, 9);
  EXPECT_EQ(a.per_size_level(0.025), b.per_size_level(0.025));
  EXPECT_LT(a.per_size_level(0.025), 0.025);
  EXPECT_GE(a.per_size_level(0.025), 0.025 / 3);
  // A size without spread on either side cannot move and does not count.
  apart.baseline.push_back({0.5, 0.5, 0.5, 0.5, 0.5});
  apart.candidate.push_back({0.4, 0.4, 0.4, 0.4, 0.4});
  EXPECT_EQ(max_critical(apart, 100, 9).sizes, 3u);
}

}  // namespace
}  // namespace ccbench::compare
