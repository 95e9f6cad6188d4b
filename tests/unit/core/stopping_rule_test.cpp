#include <gtest/gtest.h>

#include <vector>

#include "sweep/stopping_rule.hpp"

namespace ccbench {
namespace {

TEST(StoppingRule, FixedIterationsTakeExactlyN) {
  StoppingRule rule;
  rule.iters = 25;
  EXPECT_EQ(first_round(rule), 25);
  std::vector<double> s(25, 1.0);
  EXPECT_TRUE(decide(rule, s, 0.1, 0.001).stop);
  s.resize(10);
  const auto d = decide(rule, s, 100.0, 0.001);  // time does not matter with -n N
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.next_round, 15);
}

TEST(StoppingRule, AutoStopsWhenTheCiIsTight) {
  StoppingRule rule;  // 1% target
  std::vector<double> s;
  for (int i = 0; i < 10; ++i) s.push_back(100.0 + 0.01 * i);
  const auto d = decide(rule, s, 0.01, 0.001);
  EXPECT_TRUE(d.stop);
  EXPECT_TRUE(d.ci_met);
}

TEST(StoppingRule, AutoKeepsSamplingNoisyDataUntilTheTimeCap) {
  StoppingRule rule;
  rule.max_time_s = 1.0;
  std::vector<double> s;
  for (int i = 0; i < 10; ++i) s.push_back(i % 2 == 0 ? 100.0 : 150.0);
  auto d = decide(rule, s, 0.1, 0.01);
  EXPECT_FALSE(d.stop);
  EXPECT_FALSE(d.ci_met);
  EXPECT_GE(d.next_round, 1);
  EXPECT_LE(d.next_round, 90);  // never more than the 0.9 s left allows at 10 ms a sample
  d = decide(rule, s, 1.01, 0.01);
  EXPECT_TRUE(d.stop);
  EXPECT_FALSE(d.ci_met);
}

TEST(StoppingRule, AtLeastTenSamplesEvenWhenTimeIsUp) {
  StoppingRule rule;
  std::vector<double> s(4, 1.0);
  const auto d = decide(rule, s, 50.0, 10.0);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.next_round, 6);
}

TEST(StoppingRule, TimeLeftOverATinySampleCostDoesNotOverflow) {
  // 1000 s left at 1e-7 s a sample is 1e10 samples: more than an int holds. The round is the
  // geometric one (n / 2, at least the minimum), not 1.
  StoppingRule rule;
  rule.max_time_s = 1000;
  std::vector<double> s;
  for (int i = 0; i < 10; ++i) s.push_back(i % 2 == 0 ? 100.0 : 150.0);
  const auto d = decide(rule, s, 1e-6, 1e-7);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.next_round, 10);
}

}  // namespace
}  // namespace ccbench
