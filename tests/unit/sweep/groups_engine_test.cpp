// The engine with concurrent groups (--groups), 4 ranks as 4 threads (ThreadChannel) over fake
// backends whose times the test chooses: the row's time is the slowest rank of all groups, each
// group's own time its slowest rank, the bandwidths and wrong counts per group as computed by hand.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/groups.hpp"
#include "fake_backend.hpp"
#include "sweep/engine.hpp"
#include "sweep/plan.hpp"
#include "sweep/watchdog.hpp"
#include "thread_channel.hpp"

namespace ccbench {
namespace {

using testing::FakeBackend;
using testing::ThreadChannel;
using testing::ThreadWorld;

class Rows final : public SweepObserver {
 public:
  std::vector<ResultRow> rows;
  void on_result(const ResultRow& row) override { rows.push_back(row); }
};

struct GroupedRun {
  std::vector<ResultRow> rows;  // rank 0's
  std::vector<int> world_barriers;
  std::vector<int> group_barriers;
};

// Runs the engine on `world_size` threads; rank r's ops take op_us[r], its check finds wrong[r].
GroupedRun run_grouped(const std::string& spec, const std::vector<double>& op_us,
                       const std::vector<std::uint64_t>& wrong, TimingMethod timing = TimingMethod::ccbench) {
  const int n = static_cast<int>(op_us.size());
  RunConfig config = testing::two_size_allreduce_config(5);
  config.sizes = {1000, 1000, 2.0, 0};  // one size
  config.timing = timing;
  config.groups = groups::parse(spec);
  const groups::Layout layout = groups::make_layout(config.groups, n);
  auto world = std::make_shared<ThreadWorld>(n);
  GroupedRun out;
  out.world_barriers.resize(static_cast<std::size_t>(n));
  out.group_barriers.resize(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      ThreadChannel channel(world, r);
      auto group = channel.split(layout.group_of(r));
      FakeBackend backend;
      backend.op_time_us = [t = op_us[static_cast<std::size_t>(r)]](const CaseSpec&) { return t; };
      backend.wrong_per_case = wrong[static_cast<std::size_t>(r)];
      const Plan plan = make_plan(config, backend, layout.ranks_per_group, layout.rank_in_group(r));
      Watchdog watchdog(0, [](const Watchdog::Event&) {});
      Rows rows;
      Engine engine(config, plan, backend, channel, watchdog, rows);
      engine.set_groups({&layout, group.get(), 2});
      engine.run();
      if (r == 0) out.rows = rows.rows;
      out.world_barriers[static_cast<std::size_t>(r)] = channel.barriers;
      out.group_barriers[static_cast<std::size_t>(r)] = static_cast<ThreadChannel&>(*group).barriers;
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

// mod:2 of 4: groups {0,2} and {1,3}. Ranks take 10, 20, 30, 40 us: group 0's slowest is 30 us,
// group 1's 40 us, the common (all groups) 40 us. Allreduce of 2 ranks: bus factor 1; 1000 B.
TEST(EngineGroups, CommonTimeIsTheSlowestRankOfAllGroups) {
  const GroupedRun run = run_grouped("mod:2", {10, 20, 30, 40}, {0, 0, 1, 2});
  ASSERT_EQ(run.rows.size(), 1u);
  const ResultRow& row = run.rows[0];
  EXPECT_EQ(row.ranks, 2);  // the group's size
  EXPECT_EQ(row.samples_us, std::vector<double>(5, 40.0));
  EXPECT_DOUBLE_EQ(row.time_us.median, 40.0);
  EXPECT_DOUBLE_EQ(row.busbw_gbps, 0.025);  // 1000 B / 40 us
  EXPECT_EQ(row.wrong, 3u);
  const auto& g = row.extra.at("groups");
  EXPECT_EQ(g["spec"], "mod:2");
  EXPECT_EQ(g["nodes_per_group"], 2);
  EXPECT_EQ(g["time_us_per_group"], nlohmann::json::parse("[30.0, 40.0]"));
  EXPECT_NEAR(g["busbw_gbps_per_group"][0].get<double>(), 1000.0 / 30e-6 / 1e9, 1e-15);
  EXPECT_DOUBLE_EQ(g["busbw_gbps_per_group"][1].get<double>(), 0.025);
  EXPECT_DOUBLE_EQ(g["busbw_gbps_aggregate"].get<double>(), 0.05);  // 2 x 1000 B / 40 us
  EXPECT_EQ(g["wrong_per_group"], nlohmann::json::parse("[1, 2]"));
  // Every sample starts after a barrier of the whole job (5 samples); never a group's barrier.
  EXPECT_EQ(run.world_barriers, std::vector<int>(4, 5));
  EXPECT_EQ(run.group_barriers, std::vector<int>(4, 0));
}

// div:2 of 4: groups {0,1} and {2,3}: 20 and 40 us.
TEST(EngineGroups, DivGroupsAreConsecutiveRanks) {
  const GroupedRun run = run_grouped("div:2", {10, 20, 30, 40}, {0, 0, 1, 2});
  ASSERT_EQ(run.rows.size(), 1u);
  const auto& g = run.rows[0].extra.at("groups");
  EXPECT_EQ(g["time_us_per_group"], nlohmann::json::parse("[20.0, 40.0]"));
  EXPECT_EQ(g["wrong_per_group"], nlohmann::json::parse("[0, 3]"));
  EXPECT_DOUBLE_EQ(run.rows[0].time_us.median, 40.0);
}

// --timing nccl-tests: means instead of maxima (over all ranks: 25 us; over each group's: 20, 30).
TEST(EngineGroups, NcclTestsTimingAveragesPerGroup) {
  const GroupedRun run = run_grouped("mod:2", {10, 20, 30, 40}, {0, 0, 0, 0}, TimingMethod::nccl_tests);
  ASSERT_EQ(run.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(run.rows[0].time_us.median, 25.0);
  EXPECT_EQ(run.rows[0].extra.at("groups")["time_us_per_group"], nlohmann::json::parse("[20.0, 30.0]"));
}

// Without groups nothing changes: no groups field.
TEST(EngineGroups, NoneLeavesRowsAsTheyWere) {
  const GroupedRun run = run_grouped("none", {10, 20, 30, 40}, {0, 0, 0, 0});
  ASSERT_EQ(run.rows.size(), 1u);
  EXPECT_FALSE(run.rows[0].extra.contains("groups"));
  EXPECT_EQ(run.rows[0].ranks, 4);
  EXPECT_DOUBLE_EQ(run.rows[0].time_us.median, 40.0);
}

}  // namespace
}  // namespace ccbench
