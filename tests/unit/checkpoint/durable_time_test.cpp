// Time to durable, throughput, the slowest rank and the tail ratio from hand-made phase times.
#include "checkpoint/durable_time.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace ccbench::checkpoint {
namespace {

RankPhases rank(int r, const char* host, double start, double end, bool writes = true) {
  RankPhases p;
  p.rank = r;
  p.host = host;
  p.writes = writes;
  p.start_s = start;
  p.end_s = end;
  p.io_s = end - start;
  return p;
}

TEST(DurableTime, LastEndMinusFirstStartPlusCommit) {
  // Ranks 0-3: (start, end) = (0.001, 2.0), (0.002, 2.5), (0.000, 4.0), (0.003, 3.0); commit 0.5 s.
  const std::vector<RankPhases> ranks = {rank(0, "a", 0.001, 2.0), rank(1, "a", 0.002, 2.5), rank(2, "b", 0.0, 4.0),
                                         rank(3, "b", 0.003, 3.0)};
  const PhaseTiming t = time_to_durable(ranks, 0.5, 9'000'000'000ULL);
  EXPECT_DOUBLE_EQ(t.ranks_s, 4.0);
  EXPECT_DOUBLE_EQ(t.time_to_durable_s, 4.5);
  EXPECT_DOUBLE_EQ(t.throughput_gbps, 2.0);  // 9e9 B / 4.5 s
  EXPECT_EQ(t.slowest_rank, 2);
  EXPECT_EQ(t.slowest_host, "b");
  // Durations 1.999, 2.498, 4.0, 2.997: median (2.498 + 2.997) / 2 = 2.7475; tail 4 / 2.7475.
  EXPECT_NEAR(t.median_rank_s, 2.7475, 1e-12);
  EXPECT_NEAR(t.tail_ratio, 4.0 / 2.7475, 1e-12);
}

TEST(DurableTime, RanksThatHoldNoShardDoNotCount) {
  const std::vector<RankPhases> ranks = {rank(0, "a", 0.0, 1.0), rank(1, "a", 0.0, 0.0, false), rank(2, "a", 0.5, 2.0)};
  const PhaseTiming t = time_to_durable(ranks, 0.0, 2'000'000'000ULL);
  EXPECT_DOUBLE_EQ(t.ranks_s, 2.0);
  EXPECT_DOUBLE_EQ(t.throughput_gbps, 1.0);
  EXPECT_DOUBLE_EQ(t.median_rank_s, 1.25);  // 1.0 and 1.5
  EXPECT_DOUBLE_EQ(t.tail_ratio, 1.2);
}

TEST(DurableTime, RejectsNonsense) {
  EXPECT_THROW(time_to_durable(std::vector<RankPhases>{rank(0, "a", 0, 0, false)}, 0, 1), std::invalid_argument);
  EXPECT_THROW(time_to_durable(std::vector<RankPhases>{rank(0, "a", 2.0, 1.0)}, 0, 1), std::invalid_argument);
  EXPECT_THROW(time_to_durable(std::vector<RankPhases>{rank(0, "a", 0, 1.0)}, -1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace ccbench::checkpoint
