// Matrix ops (alltoallv from `run --matrix`, moe_* from `run --moe`) are keyed by their traffic as
// well as their mean size: two matrices with the same S are other traffic, so their rows must not
// be paired or pooled (a hot-expert routing against a uniform one would read as a slowdown).
#include <gtest/gtest.h>

#include <string>

#include "compare/match.hpp"
#include "generate.hpp"

namespace ccbench::compare {
namespace {

using testing::make_side;
using testing::RunModel;

Side moe_side(const std::string& name, const std::string& spec, int seed) {
  RunModel m;
  m.ops = {"moe_dispatch"};
  m.sizes = {131072};
  m.trials = 2;
  Side side = make_side(name, m);
  for (auto& file : side.files) {
    for (auto& row : file.results) {
      row.extra["matrix"] = {{"imbalance", 1.5}, {"source", {{"moe", spec}, {"routing", "hot"}, {"seed", seed}}}};
    }
  }
  return side;
}

TEST(MatrixKey, IdentityIsTheFilesDigestOrTheRoutersSpecAndSeed) {
  ResultRow row;
  EXPECT_EQ(matrix_identity(row), "");
  row.extra["matrix"] = {{"source", {{"file", "m.csv"}, {"sha256", "ab12"}}}, {"imbalance", 2.0}};
  EXPECT_EQ(matrix_identity(row), "matrix sha256 ab12");
  row.extra["matrix"] = {{"source", {{"moe", "8,2,64,128,hot:1:0.5"}, {"routing", "hot"}, {"seed", 7},
                                     {"hot_fraction_drawn", 0.45}}}};
  EXPECT_EQ(matrix_identity(row), "moe 8,2,64,128,hot:1:0.5 seed 7");
}

TEST(MatrixKey, SameRoutingAndSeedPairAndAnotherRoutingDoesNot) {
  const Side base = moe_side("baseline", "8,2,64,128,hot:1:0.5", 1);
  const Matched same = match_sides(base, moe_side("candidate", "8,2,64,128,hot:1:0.5", 1), Scope{});
  ASSERT_EQ(same.sizes.size(), 1u);
  EXPECT_EQ(same.sizes[0].key.matrix, "moe 8,2,64,128,hot:1:0.5 seed 1");
  EXPECT_TRUE(same.only_in_baseline.empty());

  // Same op and S, other traffic: nothing is paired; each side's row is its own.
  const Matched other = match_sides(base, moe_side("candidate", "8,2,64,128,uniform", 1), Scope{});
  EXPECT_TRUE(other.sizes.empty());
  ASSERT_EQ(other.only_in_baseline.size(), 1u);
  ASSERT_EQ(other.only_in_candidate.size(), 1u);
  EXPECT_EQ(other.only_in_candidate[0].matrix, "moe 8,2,64,128,uniform seed 1");
  const Matched reseeded = match_sides(base, moe_side("candidate", "8,2,64,128,hot:1:0.5", 2), Scope{});
  EXPECT_TRUE(reseeded.sizes.empty());
}

// sendrecv --pattern rows: keyed by pattern, peer group and block size the same way.
Side pattern_side(const std::string& name, const std::string& pattern) {
  RunModel m;
  m.ops = {"sendrecv"};
  m.sizes = {131072};
  m.trials = 2;
  Side side = make_side(name, m);
  for (auto& file : side.files) {
    for (auto& row : file.results) {
      row.extra["sendrecv_pattern"] = {{"pattern", pattern},
                                       {"peer_group", 4},
                                       {"block_bytes", 1024},
                                       {"aggregate_gbps", 3.0},
                                       {"per_receiver_gbps", 3.0}};
    }
  }
  return side;
}

TEST(MatrixKey, TwoSendrecvPatternsNeverPair) {
  const Side base = pattern_side("baseline", "many-to-one");
  const Matched same = match_sides(base, pattern_side("candidate", "many-to-one"), Scope{});
  ASSERT_EQ(same.sizes.size(), 1u);
  EXPECT_EQ(same.sizes[0].key.matrix, "sendrecv pattern \"many-to-one\" peer_group 4 block_bytes 1024");
  const Matched other = match_sides(base, pattern_side("candidate", "one-to-many"), Scope{});
  EXPECT_TRUE(other.sizes.empty());
  EXPECT_EQ(other.only_in_baseline.size(), 1u);
  EXPECT_EQ(other.only_in_candidate.size(), 1u);
}

}  // namespace
}  // namespace ccbench::compare
