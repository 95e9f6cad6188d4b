// Per-rank timing (--per-rank): each rank's median and last arrivals, hand-computed.
#include "sweep/per_rank.hpp"

#include <gtest/gtest.h>

namespace ccbench::per_rank {
namespace {

TEST(PerRank, MedianAndLastArrivalPerRank) {
  // Rank 2 is the straggler: it waits least in the barrier (it arrives last) in samples 0, 1, 3;
  // rank 0 in sample 2.
  const std::vector<RankTiming> ranks = {
      {"a", {10, 12, 11, 30}, {50, 40, 1, 60}},
      {"a", {10, 10, 10, 10}, {45, 35, 20, 55}},
      {"b", {20, 22, 21, 40}, {2, 3, 30, 4}},
  };
  const nlohmann::json j = summarize(ranks);
  EXPECT_EQ(j["hosts"], (nlohmann::json{"a", "a", "b"}));
  EXPECT_EQ(j["median_us"], (nlohmann::json{11.5, 10.0, 21.5}));
  EXPECT_EQ(j["last_arrivals"], (nlohmann::json{1, 0, 3}));
}

TEST(PerRank, EncodeDecodeRoundTripsExactly) {
  const RankTiming t{"ccb-h3", {0.1, 123456.789012345, 3e-7}, {5, 0.25, 1e9}};
  const RankTiming back = decode(encode(t));
  EXPECT_EQ(back.host, t.host);
  EXPECT_EQ(back.samples_us, t.samples_us);
  EXPECT_EQ(back.barrier_wait_us, t.barrier_wait_us);
  EXPECT_THROW(decode("host\n3 1 2"), std::invalid_argument);
}

}  // namespace
}  // namespace ccbench::per_rank
