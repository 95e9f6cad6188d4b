// Replay's alltoallv: the hand-written three-rank trace (tests/data/replay/alltoallv_three.trace.json)
// whose group "rot" lists its members as trace ranks 2, 0, 1 and whose alltoallv is uneven. Each
// rank's counts and displacements come from its own row; its receive counts from the other ranks'
// rows, all in the communicator's order (ascending world rank). Worked by hand below.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "replay/plan.hpp"
#include "trace/trace.hpp"

namespace ccbench {
namespace {

const std::string kThree = std::string(CCBENCH_SOURCE_DIR) + "/tests/data/replay/alltoallv_three.trace.json";

using Counts = std::vector<std::uint64_t>;

// Traced counts in group order (trace ranks 2, 0, 1): trace rank 2 sends {0, 2, 4}, trace rank 0
// {1, 3, 5}, trace rank 1 {6, 0, 2}. In world-rank order (identity map), row = sender, elements:
//   rank 0: 3 5 1    rank 1: 0 2 6    rank 2: 2 4 0
TEST(ReplayAlltoallv, CountsFromEveryMembersRowInCommunicatorOrder) {
  const replay::ReplayPlan plan = replay::make_plan(trace::load(kThree), replay::identity_map(3, 3), kThree);
  const auto& r0 = plan.calls[0][0];
  ASSERT_TRUE(r0.matrix);
  EXPECT_EQ(r0.op, Op::alltoallv);
  EXPECT_EQ(r0.matrix->counts.send_counts, (Counts{3, 5, 1}));
  EXPECT_EQ(r0.matrix->counts.recv_counts, (Counts{3, 0, 2}));
  EXPECT_EQ(r0.matrix->counts.source_offsets, (Counts{0, 0, 0}));
  const auto& r1 = plan.calls[1][0];
  EXPECT_EQ(r1.matrix->counts.send_counts, (Counts{0, 2, 6}));
  EXPECT_EQ(r1.matrix->counts.recv_counts, (Counts{5, 2, 4}));
  EXPECT_EQ(r1.matrix->counts.recv_displs, (Counts{0, 5, 7}));
  EXPECT_EQ(r1.matrix->counts.source_offsets, (Counts{3, 0, 2}));  // after each sender's block to rank 0
  EXPECT_EQ(r1.layout.send_elements, 8u);
  EXPECT_EQ(r1.layout.recv_elements, 11u);
  // One call site on every rank: 23 elements over 3 ranks, S = 92 / 3 = 30 bytes (rounded down).
  const auto& site = plan.sites[static_cast<std::size_t>(r0.site)];
  EXPECT_EQ(r1.site, r0.site);
  EXPECT_EQ(plan.calls[2][0].site, r0.site);
  EXPECT_EQ(site.bytes, 30u);
  EXPECT_EQ(site.count, 7u);
  EXPECT_EQ(site.group_size, 3);
}

// --ranks-map 1,2,0: world ranks 0, 1, 2 replay trace ranks 1, 2, 0, so the matrix in world order is
//   rank 0 (trace 1): 2 6 0    rank 1 (trace 2): 4 0 2    rank 2 (trace 0): 5 1 3
TEST(ReplayAlltoallv, RankMapReordersTheMatrix) {
  const replay::ReplayPlan plan = replay::make_plan(trace::load(kThree), replay::parse_rank_map("1,2,0", 3, 3), kThree);
  EXPECT_EQ(plan.calls[0][0].matrix->counts.send_counts, (Counts{2, 6, 0}));
  EXPECT_EQ(plan.calls[0][0].matrix->counts.recv_counts, (Counts{2, 4, 5}));
  EXPECT_EQ(plan.calls[2][0].matrix->counts.recv_counts, (Counts{0, 2, 3}));
}

// A member that issues fewer alltoallv calls on the group than another cannot be replayed.
TEST(ReplayAlltoallv, AMemberMissingTheCallIsAUsageError) {
  nlohmann::json doc;
  std::ifstream(kThree) >> doc;
  doc["ranks"][1]["calls"].erase(0);
  const std::string path = ::testing::TempDir() + "/missing_alltoallv.trace.json";
  std::ofstream(path) << doc.dump();
  try {
    replay::make_plan(trace::load(path), replay::identity_map(3, 3), path);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), path +
                                         ": group 'rot': trace rank 1 issues 0 alltoallv calls and trace rank 2 1: "
                                         "every member must issue each one");
  }
}

}  // namespace
}  // namespace ccbench
