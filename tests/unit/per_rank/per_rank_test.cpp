// Per-rank timing (--per-rank): each rank's median and last arrivals, hand-computed.
#include "sweep/per_rank.hpp"

#include <gtest/gtest.h>

#include "fake_backend.hpp"
#include "sweep/channel.hpp"
#include "sweep/engine.hpp"
#include "sweep/plan.hpp"
#include "sweep/watchdog.hpp"

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

class Rows final : public SweepObserver {
 public:
  std::vector<ResultRow> rows;
  void on_result(const ResultRow& row) override { rows.push_back(row); }
};

std::vector<ResultRow> sweep(bool per_rank) {
  RunConfig config = testing::two_size_allreduce_config(5);
  config.per_rank = per_rank;
  testing::FakeBackend backend;
  backend.op_time_us = [](const CaseSpec& c) { return c.layout.bytes == 1024 ? 7.0 : 9.0; };
  LocalChannel channel;
  const Plan plan = make_plan(config, backend, 1, 0);
  Watchdog watchdog(0, [](const Watchdog::Event&) {});
  Rows rows;
  Engine(config, plan, backend, channel, watchdog, rows).run();
  return rows.rows;
}

TEST(PerRank, TheEngineWritesTheFieldOnlyWhenAskedAndItRoundTrips) {
  for (const ResultRow& row : sweep(false)) EXPECT_FALSE(row.extra.contains("per_rank"));
  const auto rows = sweep(true);
  ASSERT_EQ(rows.size(), 2u);
  for (const ResultRow& row : rows) {
    ASSERT_TRUE(row.extra.contains("per_rank"));
    const auto& pr = row.extra["per_rank"];
    EXPECT_EQ(pr["hosts"], (nlohmann::json{local_host()}));
    EXPECT_EQ(pr["median_us"], (nlohmann::json{row.bytes == 1024 ? 7.0 : 9.0}));
    EXPECT_EQ(pr["last_arrivals"], (nlohmann::json{5}));  // one rank: last in all 5 samples
    // Written as an optional field of the row and read back into extra.
    const nlohmann::json j = to_json(row);
    EXPECT_EQ(j["per_rank"], pr);
    EXPECT_EQ(row_from_json(j, "t", "/results/0").extra["per_rank"], pr);
  }
}

}  // namespace
}  // namespace ccbench::per_rank
