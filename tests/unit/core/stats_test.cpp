#include <gtest/gtest.h>

#include <vector>

#include "core/stats.hpp"

namespace ccbench::stats {
namespace {

TEST(Quantile, Type7LikeNumpy) {
  const std::vector<double> v{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(quantile_sorted(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile_sorted(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile_sorted(v, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(quantile_sorted(v, 0.25), 1.75);  // numpy.quantile([1,2,3,4], 0.25)
  const std::vector<double> one{7};
  EXPECT_DOUBLE_EQ(median_sorted(one), 7.0);
}

TEST(MedianCi, SmallSamplesHandComputed) {
  // n = 10: P(B <= 1) = 11/1024 = 0.0107 <= 0.025 and P(B <= 2) = 56/1024 = 0.0547 > 0.025, so the
  // CI is [X(2), X(9)] one-based = zero-based (1, 8), coverage 1 - 2*0.0107 = 97.9%.
  EXPECT_EQ(median_ci_indices(10, 0.95), (std::pair<std::size_t, std::size_t>{1, 8}));
  // n = 5: even the extremes only cover 1 - 2/32 = 93.75%: the whole range.
  EXPECT_EQ(median_ci_indices(5, 0.95), (std::pair<std::size_t, std::size_t>{0, 4}));
  // n = 6: P(B <= 0) = 1/64 = 0.0156 <= 0.025 < P(B <= 1): [X(1), X(6)] one-based = (0, 5).
  EXPECT_EQ(median_ci_indices(6, 0.95), (std::pair<std::size_t, std::size_t>{0, 5}));
  EXPECT_NEAR(binomial_half_cdf(10, 1), 11.0 / 1024.0, 1e-15);
  EXPECT_NEAR(binomial_half_cdf(10, 2), 56.0 / 1024.0, 1e-15);
}

TEST(MedianCi, LargeNIsFastAndSymmetric) {
  const auto [lo, hi] = median_ci_indices(1'000'000, 0.95);
  EXPECT_EQ(lo + hi, 999'999u);
  // Normal approximation: n/2 - 1.96 sqrt(n)/2 = 500000 - 980.
  EXPECT_NEAR(static_cast<double>(lo), 499020.0, 3.0);
  EXPECT_LE(binomial_half_cdf(1'000'000, lo), 0.025);
  EXPECT_GT(binomial_half_cdf(1'000'000, lo + 1), 0.025);
}

TEST(Summarize, AllFields) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // unsorted input
  const Summary s = summarize(v);
  EXPECT_EQ(s.n, 100u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.median, 50.5);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_NEAR(s.p99, 99.01, 1e-9);
  EXPECT_LE(s.ci_lo, s.median);
  EXPECT_GE(s.ci_hi, s.median);
  // n = 100: the textbook 95% interval is [X(40), X(61)] one-based.
  EXPECT_DOUBLE_EQ(s.ci_lo, 40);
  EXPECT_DOUBLE_EQ(s.ci_hi, 61);
  EXPECT_NEAR(relative_ci_halfwidth(s), 10.5 / 50.5, 1e-12);
}

}  // namespace
}  // namespace ccbench::stats
