// The judging arithmetic against SciPy (scipy.stats.t, numpy; the values below were computed with
// them from the same inputs) and Holm's step-down by hand.
#include "screen/judge.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace ccbench::screen {
namespace {

std::vector<double> logs(std::initializer_list<double> v) {
  std::vector<double> out;
  for (double x : v) out.push_back(std::log(x));
  return out;
}

TEST(ScreenJudge, ASlowHostAgainstAQuietFleetMatchesScipy) {
  const auto host = logs({0.6, 0.62});
  const auto ref = make_reference(logs({1.0, 0.95, 1.05, 0.98, 1.02}), {host});
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->tests, 5);
  EXPECT_NEAR(ref->level_log, 0.0, 1e-15);
  EXPECT_DOUBLE_EQ(ref->df, 5.0);  // 4 from the reference, 1 from the host's two tests
  EXPECT_NEAR(ref->sigma_log, 0.035630537784432856, 1e-12);
  EXPECT_NEAR(ref->level_se_log, 1.197 * 0.035630537784432856 / std::sqrt(5.0), 1e-12);
  const HostJudgement j = judge_host(*ref, host, true);
  EXPECT_EQ(j.tests, 2);
  EXPECT_FALSE(j.own_noise);
  EXPECT_NEAR(j.ratio, 0.6099180272790763, 1e-12);
  EXPECT_NEAR(j.worse_log, 0.49443071235449526, 1e-12);
  EXPECT_NEAR(j.se_log, 0.031600125158220194, 1e-12);
  EXPECT_NEAR(j.p_value, 9.691011287616486e-06, 1e-9);  // scipy.stats.t.sf(worse / se, 5)
}

TEST(ScreenJudge, AHostThatScattersMoreThanTheFleetCarriesItsOwnNoise) {
  const auto host = logs({0.6, 0.9});
  const auto ref = make_reference(logs({1.0, 0.95, 1.05, 0.98, 1.02}), {host});
  ASSERT_TRUE(ref);
  const HostJudgement j = judge_host(*ref, host, true);
  EXPECT_TRUE(j.own_noise);
  EXPECT_DOUBLE_EQ(j.df, 5.0);  // the pooled df, not the host's 1
  EXPECT_NEAR(j.se_log, 0.21481296613304576, 1e-12);
  EXPECT_NEAR(j.p_value, 0.10548174319031636, 1e-9);  // scipy.stats.t.sf(worse / se, 5)
}

// A host 40% slow with three tests that scatter more than the fleet's (15% against 10%), among 64
// hosts judged on two metrics: with the pooled 9 df it is blamed at Holm's level (p 1.17e-4 against
// 0.05 / 128); with its own 2 df it was p 0.0138 and ended "not judged".
TEST(ScreenJudge, ASlowHostWithFewNoisyTestsIsBlamedNotLeftUnjudged) {
  const auto host = logs({0.52, 0.6, 0.68});
  const auto ref = make_reference(logs({1.0, 0.9, 1.1, 1.05, 0.95, 1.12, 0.88, 1.0}), {host});
  ASSERT_TRUE(ref);
  EXPECT_DOUBLE_EQ(ref->df, 9.0);
  const HostJudgement j = judge_host(*ref, host, true);
  EXPECT_TRUE(j.own_noise);
  EXPECT_DOUBLE_EQ(j.df, 9.0);
  EXPECT_NEAR(j.worse_log, 0.5168048573282131, 1e-12);
  EXPECT_NEAR(j.se_log, 0.08779945844375713, 1e-12);
  EXPECT_NEAR(j.p_value, 0.00011651382066208468, 1e-9);  // scipy.stats.t.sf(worse / se, 9)
  std::vector<double> family(128, 0.5);
  family[0] = j.p_value;
  EXPECT_TRUE(holm_reject(family, 0.05)[0]);
  EXPECT_GT(j.worse_log, t_critical(0.05 / 128, j.df) * j.se_log);  // the search's blame test
}

TEST(ScreenJudge, LatencyIsWorseUpwards) {
  const auto ref = make_reference(logs({10, 11, 9, 10}), {});
  ASSERT_TRUE(ref);
  const HostJudgement j = judge_host(*ref, logs({30, 30}), false);
  EXPECT_NEAR(j.worse_log, std::log(3.0), 1e-12);
  EXPECT_LT(j.p_value, 1e-3);
  EXPECT_GT(judge_host(*ref, logs({3, 3}), false).p_value, 0.999);
}

TEST(ScreenJudge, TooFewReferenceTestsGiveNoReference) {
  EXPECT_FALSE(make_reference(logs({1.0}), {}));
  EXPECT_FALSE(make_reference({}, {logs({1.0, 1.1})}));
}

TEST(ScreenJudge, MedianSpreadFactorIsTheMeasuredTable) {
  EXPECT_DOUBLE_EQ(median_se_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(median_se_factor(3), 1.158);
  EXPECT_DOUBLE_EQ(median_se_factor(7), 1.216);
  EXPECT_NEAR(median_se_factor(1000), 1.2533141373155, 1e-12);
}

TEST(ScreenJudge, HolmStepsDownByHand) {
  // Sorted 0.001, 0.01, 0.02, 0.04 against 0.05/4, 0.05/3, 0.05/2, 0.05/1: the first three pass,
  // and 0.04 <= 0.05 too.
  EXPECT_EQ(holm_reject({0.02, 0.001, 0.04, 0.01}, 0.05), (std::vector<bool>{true, true, true, true}));
  // 0.03 > 0.05/3 stops the step-down: only 0.001 is rejected.
  EXPECT_EQ(holm_reject({0.03, 0.001, 0.04, 0.035}, 0.05), (std::vector<bool>{false, true, false, false}));
}

TEST(ScreenJudge, CriticalValueMatchesScipy) {
  EXPECT_NEAR(t_critical(0.05 / 14, 9), 3.4615911031383098, 1e-6);  // scipy.stats.t.ppf(1 - 0.05/14, 9)
}

}  // namespace
}  // namespace ccbench::screen
