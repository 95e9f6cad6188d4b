// Young's and Daly's checkpoint intervals against the optima printed in Daly (2006), and the
// goodput of Daly's exponential-failure model against a case worked by hand (docs/model.md, "What
// checkpoints cost a job").
#include "model/checkpoint_cost.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace {

using ccbench::model::daly_interval_s;
using ccbench::model::job_cost;
using ccbench::model::young_interval_s;

constexpr double kMin = 60.0;

// Daly's paper, delta = 5 min: the optimum compute interval is 117, 57 and 9.1 minutes at a mean
// time to interrupt of 24 h, 6 h and 15 min (printed to two or three digits).
TEST(CheckpointCost, DalyReproducesThePapersOptima) {
  EXPECT_NEAR(daly_interval_s(5 * kMin, 24 * 60 * kMin) / kMin, 117, 0.5);
  EXPECT_NEAR(daly_interval_s(5 * kMin, 6 * 60 * kMin) / kMin, 57, 0.5);
  EXPECT_NEAR(daly_interval_s(5 * kMin, 15 * kMin) / kMin, 9.1, 0.05);
}

// Young: sqrt(2 delta M) = sqrt(2 x 5 x 1440) = 120 min, sqrt(2 x 5 x 360) = 60 min exactly.
TEST(CheckpointCost, YoungIsSqrtTwoDeltaM) {
  EXPECT_DOUBLE_EQ(young_interval_s(5 * kMin, 24 * 60 * kMin), 120 * kMin);
  EXPECT_DOUBLE_EQ(young_interval_s(5 * kMin, 6 * 60 * kMin), 60 * kMin);
}

// The series by hand at delta = 5, M = 360 min: x = 5/720, 60 (1 + sqrt(x)/3 + x/9) - 5 = 56.713 min.
TEST(CheckpointCost, DalySeriesByHand) {
  const double x = 5.0 / 720.0;
  EXPECT_NEAR(daly_interval_s(5, 360), 60 * (1 + std::sqrt(x) / 3 + x / 9) - 5, 1e-12);
  EXPECT_NEAR(daly_interval_s(5, 360), 56.713, 1e-3);
}

// delta >= 2M: Daly takes M.
TEST(CheckpointCost, DalyBeyondTwoMIsM) {
  EXPECT_DOUBLE_EQ(daly_interval_s(20, 10), 10);
  EXPECT_DOUBLE_EQ(daly_interval_s(20.0, 10.0 - 1e-9), 10.0 - 1e-9);
}

// By hand: tau = 10, delta = 1, M = 100, R = 2. Segment wall time
// 100 e^0.02 (e^0.11 - 1) = 100 x 1.0202013 x 0.1162781 = 11.86270; goodput 10 / 11.86270 = 0.842978;
// checkpoints 1 / 11.86270 = 0.084298; restarts 0.1162781 x 2 / 11.86270 = 0.019604; rework the rest,
// 0.053120.
TEST(CheckpointCost, GoodputByHand) {
  const auto c = job_cost(10, 1, 2, 100);
  EXPECT_NEAR(c.segment_wall_s, 11.86270, 1e-5);
  EXPECT_NEAR(c.goodput, 0.842978, 1e-6);
  EXPECT_NEAR(c.checkpoint_fraction, 0.084298, 1e-6);
  EXPECT_NEAR(c.restart_fraction, 0.019604, 1e-6);
  EXPECT_NEAR(c.rework_fraction, 0.053120, 1e-6);
  EXPECT_NEAR(c.goodput + c.checkpoint_fraction + c.restart_fraction + c.rework_fraction, 1.0, 1e-12);
}

// No restart cost: 10 / (100 (e^0.11 - 1)) = 0.860007.
TEST(CheckpointCost, GoodputWithoutRestart) {
  const auto c = job_cost(10, 1, 0, 100);
  EXPECT_NEAR(c.goodput, 0.860007, 1e-6);
  EXPECT_DOUBLE_EQ(c.restart_fraction, 0.0);
}

// Daly's interval is the optimum of this model: goodput falls on either side of it.
TEST(CheckpointCost, DalyIntervalMaximisesGoodput) {
  const double delta = 60, m = 3 * 3600.0, r = 120;
  const double tau = daly_interval_s(delta, m);
  const double best = job_cost(tau, delta, r, m).goodput;
  EXPECT_GT(best, job_cost(0.8 * tau, delta, r, m).goodput);
  EXPECT_GT(best, job_cost(1.25 * tau, delta, r, m).goodput);
}

TEST(CheckpointCost, RefusesNonsense) {
  EXPECT_THROW(young_interval_s(0, 10), std::invalid_argument);
  EXPECT_THROW(young_interval_s(1, -1), std::invalid_argument);
  EXPECT_THROW(daly_interval_s(NAN, 10), std::invalid_argument);
  EXPECT_THROW(job_cost(0, 1, 0, 10), std::invalid_argument);
  EXPECT_THROW(job_cost(1, -1, 0, 10), std::invalid_argument);
  EXPECT_THROW(job_cost(1e6, 1, 0, 1), std::invalid_argument);  // e^(1e6) overflows: never finishes
}

}  // namespace
