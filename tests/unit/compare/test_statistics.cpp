#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "compare/bootstrap.hpp"
#include "compare/statistics.hpp"

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

TEST(Bootstrap, DeterministicForASeedAndCentredOnTheEstimate) {
  TrialTable t;
  t.baseline_trials = 6;
  t.candidate_trials = 6;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0, 0.01);
  for (int s = 0; s < 8; ++s) {
    std::vector<double> b, c;
    for (int i = 0; i < 6; ++i) {
      b.push_back(std::log(100.0) + noise(rng));
      c.push_back(std::log(100.0 / 1.2) + noise(rng));
    }
    t.baseline_log.push_back(b);
    t.candidate_log.push_back(c);
  }
  const auto a = bootstrap_trials(t, 2000, 42);
  const auto b = bootstrap_trials(t, 2000, 42);
  EXPECT_EQ(a.geomean_replicates, b.geomean_replicates);
  EXPECT_NEAR(std::exp(a.geomean_log), 1.2, 0.01);
  auto reps = a.geomean_replicates;
  const double lo = percentile_inplace(reps, 0.025), hi = percentile_inplace(reps, 0.975);
  EXPECT_LT(lo, a.geomean_log);
  EXPECT_GT(hi, a.geomean_log);
  const auto other = bootstrap_trials(t, 2000, 43);
  EXPECT_NE(a.geomean_replicates, other.geomean_replicates);
}

}  // namespace
}  // namespace ccbench::compare
