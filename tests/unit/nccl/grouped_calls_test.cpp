// The grouped ncclSend/ncclRecv of sendrecv, gather and scatter (backends/nccl/grouped_calls.hpp),
// every rank of 3 with root 1, against the calls written out by hand from nccl-tests' definitions.
#include "backends/nccl/grouped_calls.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace ccbench::nccl {
namespace {

constexpr std::uint64_t kCount = 8;

std::vector<GroupedCall> calls(Op op, int rank, int nranks, int root, bool in_place) {
  std::vector<GroupedCall> out;
  for_each_grouped_call(op, rank, nranks, root, in_place, kCount, [&](const GroupedCall& c) { out.push_back(c); });
  return out;
}

GroupedCall send(int peer, std::uint64_t offset = 0) { return {true, peer, offset}; }
GroupedCall recv(int peer, std::uint64_t offset = 0) { return {false, peer, offset}; }

TEST(GroupedCalls, SendrecvSendsToTheNextRankAndReceivesFromThePrevious) {
  EXPECT_EQ(calls(Op::sendrecv, 0, 3, -1, false), (std::vector{send(1), recv(2)}));
  EXPECT_EQ(calls(Op::sendrecv, 1, 3, -1, false), (std::vector{send(2), recv(0)}));
  EXPECT_EQ(calls(Op::sendrecv, 2, 3, -1, false), (std::vector{send(0), recv(1)}));
  EXPECT_EQ(calls(Op::sendrecv, 0, 1, -1, false), (std::vector{send(0), recv(0)}));  // one rank: itself
}

TEST(GroupedCalls, GatherReceivesEveryBlockOnTheRoot) {
  // Out of place the root receives rank r's block at r x count, its own included, and every rank
  // sends its block to the root.
  EXPECT_EQ(calls(Op::gather, 1, 3, 1, false), (std::vector{recv(0, 0), recv(1, 8), recv(2, 16), send(1)}));
  EXPECT_EQ(calls(Op::gather, 0, 3, 1, false), (std::vector{send(1)}));
  EXPECT_EQ(calls(Op::gather, 2, 3, 1, false), (std::vector{send(1)}));
  // In place the root's block is already at root x count: no call to itself.
  EXPECT_EQ(calls(Op::gather, 1, 3, 1, true), (std::vector{recv(0, 0), recv(2, 16)}));
  EXPECT_EQ(calls(Op::gather, 2, 3, 1, true), (std::vector{send(1)}));
}

TEST(GroupedCalls, ScatterSendsEveryBlockFromTheRoot) {
  EXPECT_EQ(calls(Op::scatter, 1, 3, 1, false), (std::vector{send(0, 0), send(1, 8), send(2, 16), recv(1)}));
  EXPECT_EQ(calls(Op::scatter, 0, 3, 1, false), (std::vector{recv(1)}));
  EXPECT_EQ(calls(Op::scatter, 1, 3, 1, true), (std::vector{send(0, 0), send(2, 16)}));
  EXPECT_EQ(calls(Op::scatter, 2, 3, 1, true), (std::vector{recv(1)}));
}

TEST(GroupedCalls, OtherOpsHaveNone) {
  EXPECT_TRUE(calls(Op::allreduce, 0, 3, -1, false).empty());
  EXPECT_TRUE(calls(Op::reduce, 1, 3, 1, false).empty());
}

}  // namespace
}  // namespace ccbench::nccl
