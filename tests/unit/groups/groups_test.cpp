#include "core/groups.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "core/error.hpp"

namespace ccbench::groups {
namespace {

std::string usage_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

TEST(GroupsSpec, ParsesModDivNone) {
  EXPECT_EQ(parse("mod:2"), (Spec{Kind::mod, 2}));
  EXPECT_EQ(parse("div:8"), (Spec{Kind::div, 8}));
  EXPECT_EQ(parse("MOD:4"), (Spec{Kind::mod, 4}));
  EXPECT_EQ(parse("none"), Spec{});
  EXPECT_EQ(to_string(parse("Div:3")), "div:3");
  EXPECT_EQ(to_string(Spec{}), "none");
}

TEST(GroupsSpec, BadSpecsNameTheFlag) {
  EXPECT_EQ(usage_message([] { parse("xor:2"); }), "--groups: unknown SPEC 'xor:2' (expected mod:N, div:N or none)");
  EXPECT_EQ(usage_message([] { parse("mod"); }), "--groups: unknown SPEC 'mod' (expected mod:N, div:N or none)");
  EXPECT_EQ(usage_message([] { parse(""); }), "--groups: unknown SPEC '' (expected mod:N, div:N or none)");
  EXPECT_EQ(usage_message([] { parse("mod:x"); }), "--groups mod:x: N must be a positive integer (got 'x')");
  EXPECT_EQ(usage_message([] { parse("mod:0"); }), "--groups mod:0: N must be a positive integer (got '0')");
  EXPECT_EQ(usage_message([] { parse("div:-2"); }), "--groups div:-2: N must be a positive integer (got '-2')");
  EXPECT_EQ(usage_message([] { parse("div:2.5"); }), "--groups div:2.5: N must be a positive integer (got '2.5')");
  EXPECT_EQ(usage_message([] { parse("div:"); }), "--groups div:: N must be a positive integer (got '')");
  EXPECT_EQ(usage_message([] { parse("mod:99999999999"); }),
            "--groups mod:99999999999: N must be a positive integer (got '99999999999')");
}

// Hand-computed: group of each world rank 0..7, and rank within the group.
TEST(GroupsLayout, ModTwoOfEight) {
  const Layout l = make_layout(parse("mod:2"), 8);
  EXPECT_EQ(l.count, 2);
  EXPECT_EQ(l.ranks_per_group, 4);
  EXPECT_EQ(l.members(0), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(l.members(1), (std::vector<int>{1, 3, 5, 7}));
  const int group[8] = {0, 1, 0, 1, 0, 1, 0, 1};
  const int rank[8] = {0, 0, 1, 1, 2, 2, 3, 3};
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(l.group_of(r), group[r]) << r;
    EXPECT_EQ(l.rank_in_group(r), rank[r]) << r;
  }
}

TEST(GroupsLayout, DivTwoOfEight) {
  const Layout l = make_layout(parse("div:2"), 8);
  EXPECT_EQ(l.count, 4);
  EXPECT_EQ(l.ranks_per_group, 2);
  EXPECT_EQ(l.members(0), (std::vector<int>{0, 1}));
  EXPECT_EQ(l.members(1), (std::vector<int>{2, 3}));
  EXPECT_EQ(l.members(2), (std::vector<int>{4, 5}));
  EXPECT_EQ(l.members(3), (std::vector<int>{6, 7}));
  const int group[8] = {0, 0, 1, 1, 2, 2, 3, 3};
  const int rank[8] = {0, 1, 0, 1, 0, 1, 0, 1};
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(l.group_of(r), group[r]) << r;
    EXPECT_EQ(l.rank_in_group(r), rank[r]) << r;
  }
}

TEST(GroupsLayout, ModFourOfTwelveAndDivThreeOfSix) {
  const Layout m = make_layout(parse("mod:4"), 12);
  EXPECT_EQ(m.count, 4);
  EXPECT_EQ(m.ranks_per_group, 3);
  EXPECT_EQ(m.members(3), (std::vector<int>{3, 7, 11}));
  EXPECT_EQ(m.rank_in_group(11), 2);
  const Layout d = make_layout(parse("div:3"), 6);
  EXPECT_EQ(d.count, 2);
  EXPECT_EQ(d.members(1), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(d.rank_in_group(4), 1);
}

TEST(GroupsLayout, NoneIsOneGroupOfEveryRank) {
  const Layout l = make_layout(Spec{}, 4);
  EXPECT_FALSE(l.grouped());
  EXPECT_EQ(l.count, 1);
  EXPECT_EQ(l.ranks_per_group, 4);
  EXPECT_EQ(l.group_of(3), 0);
  EXPECT_EQ(l.rank_in_group(3), 3);
  // mod:1 and div:size are one group too, but recorded as groups.
  EXPECT_EQ(make_layout(parse("mod:1"), 4).count, 1);
  EXPECT_EQ(make_layout(parse("div:4"), 4).count, 1);
}

TEST(GroupsLayout, SpecsThatDoNotFitTheRanks) {
  EXPECT_EQ(usage_message([] { make_layout(parse("mod:3"), 8); }), "--groups mod:3: 3 does not divide the 8 ranks");
  EXPECT_EQ(usage_message([] { make_layout(parse("div:3"), 4); }), "--groups div:3: 3 does not divide the 4 ranks");
  EXPECT_EQ(usage_message([] { make_layout(parse("mod:16"), 8); }), "--groups mod:16: 16 does not divide the 8 ranks");
  EXPECT_EQ(usage_message([] { make_layout(parse("mod:4"), 4); }),
            "--groups mod:4: 4 groups of one rank each out of 4 ranks (a group needs at least 2)");
  EXPECT_EQ(usage_message([] { make_layout(parse("div:1"), 4); }),
            "--groups div:1: 4 groups of one rank each out of 4 ranks (a group needs at least 2)");
}

TEST(GroupsLayout, HostsEachGroupSpans) {
  // 4 ranks on 2 hosts, by slot: ranks 0,1 on a; 2,3 on b.
  const std::vector<std::string> hosts = {"a", "a", "b", "b"};
  const Layout mod = make_layout(parse("mod:2"), 4);
  EXPECT_EQ(group_hosts(mod, hosts), (std::vector<std::vector<std::string>>{{"a", "b"}, {"a", "b"}}));
  const Layout div = make_layout(parse("div:2"), 4);
  EXPECT_EQ(group_hosts(div, hosts), (std::vector<std::vector<std::string>>{{"a"}, {"b"}}));
  const nlohmann::json j = layout_json(div, group_hosts(div, hosts));
  EXPECT_EQ(j["spec"], "div:2");
  EXPECT_EQ(j["count"], 2);
  EXPECT_EQ(j["ranks_per_group"], 2);
  EXPECT_EQ(j["nodes_per_group"], 1);
  EXPECT_EQ(j["world_ranks"], nlohmann::json::parse("[[0,1],[2,3]]"));
  EXPECT_EQ(j["hosts"], nlohmann::json::parse(R"([["a"],["b"]])"));
  EXPECT_EQ(layout_json(mod, group_hosts(mod, hosts))["nodes_per_group"], 2);
}

// Bandwidths by hand. mod:2 of 4 ranks: groups of 2, allreduce bus factor 2(2-1)/2 = 1.
// 1e6 bytes; group 0's samples median 20 us -> 50 GB/s; group 1's median 45 us -> 22.2 GB/s.
// The common median (slowest of all groups) 50 us: each group moved 1e6 B in 50 us = 20 GB/s,
// two groups 40 GB/s algbw and busbw.
TEST(GroupsRow, PerGroupAndAggregateBandwidth) {
  const Layout l = make_layout(parse("mod:2"), 4);
  const auto j = row_json(l, 2, Op::allreduce, 1000000, {{10, 30, 20}, {40, 50, 45}}, 50.0, {0, 3});
  EXPECT_EQ(j["spec"], "mod:2");
  EXPECT_EQ(j["count"], 2);
  EXPECT_EQ(j["ranks_per_group"], 2);
  EXPECT_EQ(j["nodes_per_group"], 2);
  EXPECT_DOUBLE_EQ(j["time_us_per_group"][0].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(j["time_us_per_group"][1].get<double>(), 45.0);
  EXPECT_DOUBLE_EQ(j["busbw_gbps_per_group"][0].get<double>(), 50.0);
  EXPECT_NEAR(j["busbw_gbps_per_group"][1].get<double>(), 22.2222222222, 1e-9);
  EXPECT_DOUBLE_EQ(j["algbw_gbps_aggregate"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(j["busbw_gbps_aggregate"].get<double>(), 40.0);
  EXPECT_EQ(j["wrong_per_group"], nlohmann::json::parse("[0,3]"));
}

// div:4 of 8: two groups of 4, allreduce bus factor 2*3/4 = 1.5. 4e6 B in a common 100 us:
// algbw 40 GB/s per group, aggregate algbw 80, aggregate busbw 120.
TEST(GroupsRow, BusFactorOfTheGroupSize) {
  const Layout l = make_layout(parse("div:4"), 8);
  const auto j = row_json(l, 1, Op::allreduce, 4000000, {{100}, {80}}, 100.0, {0, 0});
  EXPECT_DOUBLE_EQ(j["busbw_gbps_per_group"][0].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(j["busbw_gbps_per_group"][1].get<double>(), 75.0);
  EXPECT_DOUBLE_EQ(j["algbw_gbps_aggregate"].get<double>(), 80.0);
  EXPECT_DOUBLE_EQ(j["busbw_gbps_aggregate"].get<double>(), 120.0);
}

}  // namespace
}  // namespace ccbench::groups
