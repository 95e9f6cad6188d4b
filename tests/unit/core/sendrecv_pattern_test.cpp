// sendrecv's peer patterns (core/sendrecv_pattern.hpp): the peer map of each pattern at several
// rank counts and group sizes, the refusals, and the bandwidths against hand-computed values.
#include "core/sendrecv_pattern.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace ccbench {
namespace {

using Peers = PatternPeers;

std::vector<Peers> all_peers(SendRecvPattern pattern, int group, int nranks) {
  std::vector<Peers> out;
  for (int r = 0; r < nranks; ++r) out.push_back(pattern_peers(pattern, group, r, nranks));
  return out;
}

TEST(SendRecvPattern, NamesParseBothSpellings) {
  EXPECT_EQ(sendrecv_pattern_names("|"), "ring|pairwise|many-to-one|one-to-many");
  EXPECT_EQ(parse_sendrecv_pattern("many-to-one"), SendRecvPattern::many_to_one);
  EXPECT_EQ(parse_sendrecv_pattern("one_to_many"), SendRecvPattern::one_to_many);
  EXPECT_EQ(parse_sendrecv_pattern("ring"), SendRecvPattern::ring);
  EXPECT_EQ(parse_sendrecv_pattern("star"), std::nullopt);
  EXPECT_EQ(name(SendRecvPattern::pairwise), "pairwise");
}

TEST(SendRecvPattern, RingIsRankPlusOneMinusOne) {
  EXPECT_EQ(all_peers(SendRecvPattern::ring, 0, 3), (std::vector<Peers>{{{1}, {2}}, {{2}, {0}}, {{0}, {1}}}));
  EXPECT_EQ(all_peers(SendRecvPattern::ring, 0, 2), (std::vector<Peers>{{{1}, {1}}, {{0}, {0}}}));
}

TEST(SendRecvPattern, PairwiseFirstHalfSendsToSecondHalf) {
  // G = 4 on 8 ranks: groups {0..3} {4..7}; 0->2, 1->3, 4->6, 5->7.
  EXPECT_EQ(
      all_peers(SendRecvPattern::pairwise, 4, 8),
      (std::vector<Peers>{{{2}, {}}, {{3}, {}}, {{}, {0}}, {{}, {1}}, {{6}, {}}, {{7}, {}}, {{}, {4}}, {{}, {5}}}));
  // G = 2 on 4 ranks: 0->1, 2->3.
  EXPECT_EQ(all_peers(SendRecvPattern::pairwise, 2, 4),
            (std::vector<Peers>{{{1}, {}}, {{}, {0}}, {{3}, {}}, {{}, {2}}}));
  // G = N = 6: 0->3, 1->4, 2->5.
  EXPECT_EQ(all_peers(SendRecvPattern::pairwise, 6, 6),
            (std::vector<Peers>{{{3}, {}}, {{4}, {}}, {{5}, {}}, {{}, {0}}, {{}, {1}}, {{}, {2}}}));
}

TEST(SendRecvPattern, ManyToOneEveryMemberSendsToTheFirst) {
  // G = 3 on 6 ranks: 1,2 -> 0 and 4,5 -> 3.
  EXPECT_EQ(all_peers(SendRecvPattern::many_to_one, 3, 6),
            (std::vector<Peers>{{{}, {1, 2}}, {{0}, {}}, {{0}, {}}, {{}, {4, 5}}, {{3}, {}}, {{3}, {}}}));
  EXPECT_EQ(all_peers(SendRecvPattern::many_to_one, 2, 2), (std::vector<Peers>{{{}, {1}}, {{0}, {}}}));
  EXPECT_EQ(all_peers(SendRecvPattern::many_to_one, 4, 4),
            (std::vector<Peers>{{{}, {1, 2, 3}}, {{0}, {}}, {{0}, {}}, {{0}, {}}}));
}

TEST(SendRecvPattern, OneToManyTheFirstSendsToEveryMember) {
  EXPECT_EQ(all_peers(SendRecvPattern::one_to_many, 4, 8),
            (std::vector<Peers>{
                {{1, 2, 3}, {}}, {{}, {0}}, {{}, {0}}, {{}, {0}}, {{5, 6, 7}, {}}, {{}, {4}}, {{}, {4}}, {{}, {4}}}));
  EXPECT_EQ(all_peers(SendRecvPattern::one_to_many, 2, 4),
            (std::vector<Peers>{{{1}, {}}, {{}, {0}}, {{3}, {}}, {{}, {2}}}));
}

TEST(SendRecvPattern, EverySendHasItsReceive) {
  // Each pattern's sends, read from the sender, are exactly the receives read from the receiver.
  for (SendRecvPattern pattern :
       {SendRecvPattern::pairwise, SendRecvPattern::many_to_one, SendRecvPattern::one_to_many}) {
    for (auto [group, nranks] : {std::pair{2, 2}, std::pair{2, 8}, std::pair{4, 8}, std::pair{8, 16}}) {
      const auto peers = all_peers(pattern, group, nranks);
      std::uint64_t sends = 0;
      for (int r = 0; r < nranks; ++r) {
        for (int to : peers[r].send_to) {
          ++sends;
          EXPECT_EQ(std::ranges::count(peers[to].receive_from, r), 1) << name(pattern) << " " << r << "->" << to;
        }
      }
      EXPECT_EQ(sends, pattern_load(pattern, group, nranks).messages) << name(pattern);
    }
  }
}

TEST(SendRecvPattern, GroupRefusalsSayWhy) {
  EXPECT_EQ(peer_group_problem(SendRecvPattern::many_to_one, 3, 6), std::nullopt);
  EXPECT_EQ(peer_group_problem(SendRecvPattern::ring, 0, 5), std::nullopt);
  EXPECT_EQ(peer_group_problem(SendRecvPattern::ring, 2, 4), "the ring pattern takes no peer group");
  EXPECT_EQ(peer_group_problem(SendRecvPattern::one_to_many, 1, 4), "a peer group of 1 ranks: it needs at least 2");
  EXPECT_EQ(peer_group_problem(SendRecvPattern::many_to_one, 3, 4),
            "a peer group of 3 ranks does not divide the 4 ranks");
  EXPECT_EQ(peer_group_problem(SendRecvPattern::pairwise, 3, 6),
            "pairwise pairs the two halves of a group: a peer group of 3 ranks is odd");
}

TEST(SendRecvPattern, BandwidthByHand) {
  // 8 ranks, G = 4, S = 1 MB (1e6 B) in 100 us.
  // ring: 8 messages; aggregate 8e6 B / 1e-4 s = 80 GB/s, per receiver 10 GB/s, bus factor 1.
  const PatternLoad ring = pattern_load(SendRecvPattern::ring, 0, 8);
  EXPECT_EQ(ring, (PatternLoad{8, 1, 1}));
  EXPECT_DOUBLE_EQ(pattern_aggregate_gbps(ring, 1'000'000, 100), 80.0);
  EXPECT_DOUBLE_EQ(pattern_per_receiver_gbps(ring, 1'000'000, 100), 10.0);
  // pairwise: 4 messages (2 per group): aggregate 40 GB/s, per receiver 10, factor 1.
  const PatternLoad pairwise = pattern_load(SendRecvPattern::pairwise, 4, 8);
  EXPECT_EQ(pairwise, (PatternLoad{4, 1, 1}));
  EXPECT_DOUBLE_EQ(pattern_aggregate_gbps(pairwise, 1'000'000, 100), 40.0);
  EXPECT_DOUBLE_EQ(pattern_bus_factor(pairwise), 1.0);
  // many-to-one: 2 groups x 3 senders = 6 messages: aggregate 60 GB/s; the receiver takes 3 MB:
  // 30 GB/s; busbw factor 3.
  const PatternLoad many = pattern_load(SendRecvPattern::many_to_one, 4, 8);
  EXPECT_EQ(many, (PatternLoad{6, 3, 1}));
  EXPECT_DOUBLE_EQ(pattern_aggregate_gbps(many, 1'000'000, 100), 60.0);
  EXPECT_DOUBLE_EQ(pattern_per_receiver_gbps(many, 1'000'000, 100), 30.0);
  EXPECT_DOUBLE_EQ(pattern_bus_factor(many), 3.0);
  // one-to-many: 6 messages, each receiver takes one (10 GB/s); the sender puts out 3: factor 3.
  const PatternLoad one = pattern_load(SendRecvPattern::one_to_many, 4, 8);
  EXPECT_EQ(one, (PatternLoad{6, 1, 3}));
  EXPECT_DOUBLE_EQ(pattern_per_receiver_gbps(one, 1'000'000, 100), 10.0);
  EXPECT_DOUBLE_EQ(pattern_bus_factor(one), 3.0);
  EXPECT_EQ(pattern_aggregate_gbps(one, 1'000'000, 0), 0.0);
}

TEST(SendRecvPattern, MessagesRoundDownToWholeBlocks) {
  EXPECT_EQ(whole_blocks_count(1024, 256), 1024u);
  EXPECT_EQ(whole_blocks_count(1000, 256), 768u);  // 3 whole blocks
  EXPECT_EQ(whole_blocks_count(100, 256), 0u);     // smaller than one block
  EXPECT_EQ(whole_blocks_count(100, 0), 100u);     // no --block-bytes: one block
  EXPECT_EQ(block_elements_of(768, 256), 256u);
  EXPECT_EQ(block_elements_of(100, 0), 100u);
}

TEST(SendRecvPattern, BlockCallsAreEverySendThenEveryReceiveInBlocks) {
  std::vector<BlockCall> calls;
  const auto collect = [&](const BlockCall& call) { calls.push_back(call); };
  // many-to-one, G = 3, rank 0 receives 512 elements from 1 and 2 in blocks of 256: sender k's
  // message at k x 512.
  for_each_block_call(pattern_peers(SendRecvPattern::many_to_one, 3, 0, 3), 512, 256, collect);
  EXPECT_EQ(calls, (std::vector<BlockCall>{
                       {false, 1, 0, 256}, {false, 1, 256, 256}, {false, 2, 512, 256}, {false, 2, 768, 256}}));
  calls.clear();
  // one-to-many, G = 3, rank 0 sends the same 512 elements to 1 and 2, one block each (no blocks).
  for_each_block_call(pattern_peers(SendRecvPattern::one_to_many, 3, 0, 3), 512, 0, collect);
  EXPECT_EQ(calls, (std::vector<BlockCall>{{true, 1, 0, 512}, {true, 2, 0, 512}}));
  calls.clear();
  // ring on 2 ranks, rank 1: a send to 0 and a receive from 0, two blocks each.
  for_each_block_call(pattern_peers(SendRecvPattern::ring, 0, 1, 2), 8, 4, collect);
  EXPECT_EQ(calls, (std::vector<BlockCall>{{true, 0, 0, 4}, {true, 0, 4, 4}, {false, 0, 0, 4}, {false, 0, 4, 4}}));
}

}  // namespace
}  // namespace ccbench
