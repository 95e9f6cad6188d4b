#include "congestion/layout.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace ccbench::congestion {
namespace {

// `ranks_per_host` ranks on each of `hosts` hosts, consecutive.
std::vector<int> blocks(int hosts, int ranks_per_host) {
  std::vector<int> h;
  for (int i = 0; i < hosts * ranks_per_host; ++i) h.push_back(i / ranks_per_host);
  return h;
}

LayoutOptions with(std::vector<Pattern> patterns) {
  LayoutOptions o;
  o.patterns = std::move(patterns);
  return o;
}

std::string error_of(const std::vector<int>& hosts, const LayoutOptions& o) {
  try {
    make_layout(hosts, o);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Layout, DefaultMeasuresTheFirstFifthOfTheHosts) {
  // 10 hosts of 2 ranks: ceil(0.2 * 10) = 2 hosts measured, ranks 0-3.
  const Layout l = make_layout(blocks(10, 2), with({Pattern::alltoall}));
  EXPECT_EQ(l.measured, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(l.local_congestors.empty());
  EXPECT_EQ(l.remote_congestors.size(), 16u);
}

TEST(Layout, DefaultTakesHostsUntilTwoRanks) {
  // 4 hosts of 1 rank: 20% is one host, one rank; a second host makes the set 2 ranks.
  const Layout l = make_layout(blocks(4, 1), with({Pattern::alltoall}));
  EXPECT_EQ(l.measured, (std::vector<int>{0, 1}));
  EXPECT_EQ(l.remote_congestors, (std::vector<int>{2, 3}));
}

TEST(Layout, MeasuredPerHostLeavesReceiversForIncast) {
  LayoutOptions o = with({Pattern::alltoall, Pattern::incast, Pattern::bcast});
  o.measured_hosts = 2;
  o.measured_per_host = 1;
  // hosts: 0:{0,1} 1:{2,3} 2:{4} 3:{5}
  const std::vector<int> hosts = {0, 0, 1, 1, 2, 3};
  const Layout l = make_layout(hosts, o);
  EXPECT_EQ(l.measured, (std::vector<int>{0, 2}));
  EXPECT_EQ(l.local_congestors, (std::vector<int>{1, 3}));
  EXPECT_EQ(l.remote_congestors, (std::vector<int>{4, 5}));
  // alltoall and bcast among the remote congestors only.
  EXPECT_EQ(l.patterns[0].groups, (std::vector<std::vector<int>>{{4, 5}}));
  EXPECT_EQ(l.patterns[0].roots, (std::vector<int>{-1}));
  EXPECT_EQ(l.patterns[2].roots, (std::vector<int>{4}));
  // incast: sender 4 -> receiver 1 (host 0), sender 5 -> receiver 3 (host 1); each pair its color.
  EXPECT_EQ(l.patterns[1].groups, (std::vector<std::vector<int>>{{1, 4}, {3, 5}}));
  EXPECT_EQ(l.patterns[1].roots, (std::vector<int>{4, 5}));
  EXPECT_EQ(l.patterns[1].color, (std::vector<int>{kMeasuredColor, 2, kMeasuredColor, 3, 2, 3}));
  EXPECT_EQ(l.patterns[0].color, (std::vector<int>{0, 1, 0, 1, 2, 2}));
}

TEST(Layout, IncastSendersComeFromDifferentHostsInTurn) {
  LayoutOptions o = with({Pattern::incast});
  o.measured_ranks = std::vector<int>{0, 1};
  // host 0: {0,1,2,3}: receivers 2,3; host 1: {4,5}; host 2: {6,7}
  const Layout l = make_layout({0, 0, 0, 0, 1, 1, 2, 2}, o);
  EXPECT_EQ(l.patterns[0].roots, (std::vector<int>{4, 6}));  // host 1 then host 2, not 4 then 5
  EXPECT_EQ(l.patterns[0].groups, (std::vector<std::vector<int>>{{2, 4}, {3, 6}}));
}

TEST(Layout, HostIndexesByNameOrBlocks) {
  EXPECT_EQ(host_indexes({"b", "b", "a", "c", "a"}, 0), (std::vector<int>{0, 0, 1, 2, 1}));
  EXPECT_EQ(host_indexes({"x", "x", "x", "x", "x"}, 2), (std::vector<int>{0, 0, 1, 1, 2}));
}

TEST(Layout, RankLists) {
  EXPECT_EQ(parse_rank_list("0,1, 4-6"), (std::vector<int>{0, 1, 4, 5, 6}));
  EXPECT_THROW(parse_rank_list("0,x"), UsageError);
  EXPECT_THROW(parse_rank_list("0,0"), UsageError);
  EXPECT_THROW(parse_rank_list("3-1"), UsageError);
  EXPECT_THROW(parse_rank_list(""), UsageError);
}

TEST(Layout, BadInputMessagesNameTheFlag) {
  LayoutOptions o = with({Pattern::alltoall});
  o.measured_hosts = 2;
  EXPECT_EQ(error_of(blocks(2, 2), o),
            "--measured-hosts 2: all 4 ranks (2 hosts) would be measured; no ranks left for congestors");
  o.measured_hosts = 3;
  EXPECT_EQ(error_of(blocks(2, 2), o), "--measured-hosts: 3 is out of range (the job has 2 hosts)");
  o.measured_hosts.reset();
  o.measured_ranks = std::vector<int>{0};
  EXPECT_EQ(error_of(blocks(4, 1), o), "--measured-ranks: the measured set needs at least 2 ranks, got 1");
  o.measured_ranks = std::vector<int>{1, 2};
  EXPECT_EQ(error_of(blocks(4, 1), o), "--measured-ranks: must include rank 0 (it writes the result files)");
  o.measured_ranks = std::vector<int>{0, 9};
  EXPECT_EQ(error_of(blocks(4, 1), o), "--measured-ranks: rank 9 does not exist (the job has 4 ranks)");
  o.measured_hosts = 1;
  o.measured_ranks = std::vector<int>{0, 1};
  EXPECT_EQ(error_of(blocks(4, 1), o), "--measured-ranks and --measured-hosts: give one of them, not both");
  // One host: the default measures all of it.
  EXPECT_EQ(error_of(blocks(1, 4), with({Pattern::alltoall})),
            "the default measured set (the first 20% of the hosts): all 4 ranks (1 host) would be measured; no ranks "
            "left for congestors");
  // incast needs receivers on the measured hosts.
  EXPECT_EQ(error_of(blocks(4, 1), with({Pattern::incast})),
            "--congestors incast: needs congestor ranks on the measured hosts to receive (got 0) and on other hosts "
            "to send (got 2); measure fewer ranks per host (--measured-per-host) or fewer hosts");
  // alltoall needs 2 remote congestors.
  LayoutOptions r = with({Pattern::alltoall});
  r.measured_ranks = std::vector<int>{0, 1};
  EXPECT_EQ(error_of({0, 0, 0, 1}, r),
            "--congestors alltoall: needs at least 2 congestor ranks on hosts without measured ranks, got 1 (2 "
            "measured ranks on 1 of 2 hosts)");
}

TEST(Layout, Patterns) {
  EXPECT_EQ(parse_patterns("alltoall,incast,bcast"),
            (std::vector<Pattern>{Pattern::alltoall, Pattern::incast, Pattern::bcast}));
  EXPECT_EQ(parse_patterns("incast"), (std::vector<Pattern>{Pattern::incast}));
  try {
    parse_patterns("alltoall,broadcast");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--congestors: unknown pattern 'broadcast' (expected alltoall, incast or bcast)");
  }
  EXPECT_THROW(parse_patterns("incast,incast"), UsageError);
  EXPECT_THROW(parse_patterns(""), UsageError);
}

TEST(Layout, Describe) {
  LayoutOptions o = with({Pattern::incast});
  o.measured_ranks = std::vector<int>{0, 1};
  const auto lines = describe(make_layout({0, 0, 0, 1, 1, 1}, o));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "measured: ranks 0-1 (2 of 6 ranks, 2 hosts in the job)");
  EXPECT_EQ(lines[1], "congestors on the measured hosts: ranks 2; on the other hosts: ranks 3-5");
  EXPECT_EQ(lines[2], "pattern incast: 3 -> 2; 2 congestor ranks idle");
}

}  // namespace
}  // namespace ccbench::congestion
