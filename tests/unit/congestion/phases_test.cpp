#include "congestion/phases.hpp"

#include <gtest/gtest.h>

namespace ccbench::congestion {
namespace {

std::string order(const std::vector<PhaseSpec>& plan) {
  std::string s;
  for (const auto& p : plan)
    s += std::to_string(p.trial) + "p" + std::to_string(p.pattern) + (p.congested ? "C " : "I ");
  return s;
}

TEST(Phases, EachPatternIsAnAdjacentPairWhoseOrderAlternatesByTrial) {
  EXPECT_EQ(order(phase_plan(3, 2)), "0p0I 0p0C 0p1I 0p1C 1p0C 1p0I 1p1C 1p1I 2p0I 2p0C 2p1I 2p1C ");
}

TEST(Phases, OneTrialOnePattern) { EXPECT_EQ(order(phase_plan(1, 1)), "0p0I 0p0C "); }

// A drift linear in the phase index cancels in the mean log ratio over two trials: the congested
// phases sit on average exactly where the isolated ones do, for every pattern.
TEST(Phases, LinearDriftCancelsOverTwoTrials) {
  const auto plan = phase_plan(2, 3);
  for (int p = 0; p < 3; ++p) {
    double iso = 0, con = 0;
    for (std::size_t i = 0; i < plan.size(); ++i) {
      if (plan[i].pattern != p) continue;
      (plan[i].congested ? con : iso) += static_cast<double>(i);
    }
    EXPECT_EQ(iso, con) << "pattern " << p;
  }
}

TEST(Phases, Names) {
  EXPECT_EQ(phase_name(false), "isolated");
  EXPECT_EQ(phase_name(true), "congested");
}

}  // namespace
}  // namespace ccbench::congestion
