// The simulation's own tests (issue 11): without noise every bad host is found and nobody else;
// the number of tests grows no faster than n log n.
#include "screen/simulate.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace ccbench::screen {
namespace {

TEST(ScreenSimulation, WithoutNoiseEveryBadHostIsFoundAndNobodyElse) {
  for (int n : {8, 16, 64, 256, 1024}) {
    for (int k : {1, 2, n / 8, 3 * n / 8}) {  // fewer than half: a fleet median exists
      for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        SimulationConfig c;
        c.hosts = n;
        c.slow_hosts = k;
        c.failed_hosts = n >= 64 ? 1 : 0;
        c.seed = seed;
        const SimulationResult r = simulate(c);
        EXPECT_EQ(r.missed, 0) << "n=" << n << " k=" << k << " seed=" << seed;
        EXPECT_EQ(r.false_blamed, 0) << "n=" << n << " k=" << k << " seed=" << seed;
      }
    }
  }
}

TEST(ScreenSimulation, TestsGrowNoFasterThanNLogN) {
  // tests(n) / (n log2 n) must not grow with n; here it falls (the search is linear: n alone,
  // n in the ring, one re-test per suspect).
  double previous = 1e9;
  for (int n = 8; n <= 1024; n *= 2) {
    SimulationConfig c;
    c.hosts = n;
    c.slow_hosts = std::max(1, n / 16);
    c.busbw_cv = 0.03;
    c.latency_cv = 0.05;
    const SimulationResult r = simulate(c);
    const double ratio = r.tests / (n * std::log2(n));
    EXPECT_LE(ratio, previous * 1.0001) << "n=" << n << " tests=" << r.tests;
    EXPECT_LT(r.tests, n * (n - 1) / 2 + 1) << "n=" << n;
    EXPECT_LE(r.tests, 2 * n + 2 * c.slow_hosts + n / 8) << "n=" << n;
    previous = ratio;
  }
}

TEST(ScreenSimulation, WallTimeIsTheSumOfEachRoundsLongestTest) {
  SimulationConfig c;
  c.hosts = 4;
  c.launch_s = 1;
  c.per_host_s = 0;
  c.measure_s = 2;
  // 4 alone in one round, ring (0,1)(2,3) then (1,2)(3,0): 3 rounds of 3 s.
  const SimulationResult r = simulate(c);
  EXPECT_EQ(r.rounds, 3);
  EXPECT_EQ(r.tests, 8);
  EXPECT_DOUBLE_EQ(r.wall_s, 9.0);
}

}  // namespace
}  // namespace ccbench::screen
