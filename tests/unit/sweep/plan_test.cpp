// make_plan: every (op, size, variant) with counts resolved, skips explained, buffers sized for the
// largest case; hand-computed for a fake backend.
#include "sweep/plan.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "fake_backend.hpp"
#include "sweep/session.hpp"

namespace ccbench {
namespace {

using testing::FakeBackend;

TEST(Plan, AllgatherOnFourRanksSkipsSizesBelowOneElementPerRank) {
  FakeBackend backend;
  RunConfig config;
  config.ops = {Op::allgather};
  config.sizes = {8, 64, 2.0, 0};  // 8 16 32 64
  config.in_place = InPlaceMode::both;
  const Plan plan = make_plan(config, backend, 4, 1);
  // float, 4 ranks: count = bytes / 4 / 4 -> 0, 1, 2, 4 elements per rank, rounded down to a multiple
  // of 16 B / 4 B = 4 elements as nccl-tests does: 0, 0, 0, 4. Only 64 B remains.
  ASSERT_EQ(plan.ops.size(), 1u);
  ASSERT_EQ(plan.ops[0].sizes.size(), 1u);
  EXPECT_EQ(plan.ops[0].sizes[0].nominal_bytes, 64u);
  EXPECT_EQ(plan.ops[0].sizes[0].variants[0].layout.count, 4u);
  ASSERT_EQ(plan.skipped.size(), 3u);
  EXPECT_EQ(plan.skipped[0].what, "allgather 8");
  EXPECT_EQ(plan.skipped[0].reason, "smaller than one element per rank");
  EXPECT_EQ(plan.cases_per_trial, 2u);  // 1 size x (out-of-place, in-place)
  // Largest case, 64 B: out-of-place sends 4 elements (16 B) and receives 16 (64 B); in-place
  // uses one buffer of 16 elements.
  EXPECT_EQ(plan.send_bytes, 16u);
  EXPECT_EQ(plan.recv_bytes, 64u);
  EXPECT_EQ(buffer_bytes_needed(plan), 80u);
}

TEST(Plan, UnsupportedVariantsAreSkippedOnceWithTheBackendsReason) {
  FakeBackend backend;
  RunConfig config;
  config.ops = {Op::allreduce, Op::broadcast};
  config.dtype = DType::float16;
  config.sizes = {1024, 2048, 2.0, 0};
  EXPECT_THROW(
      {
        try {
          make_plan(config, backend, 2, 0);
        } catch (const UsageError& e) {
          EXPECT_STREQ(e.what(),
                       "nothing to measure; allreduce out-of-place: the fake backend has no half type; allreduce "
                       "in-place: the fake backend has no half type; broadcast out-of-place: the fake backend has "
                       "no half type; broadcast in-place: the fake backend has no half type");
          throw;
        }
      },
      UsageError);
}

TEST(Plan, RootMustBeARank) {
  FakeBackend backend;
  RunConfig config;
  config.ops = {Op::broadcast};
  config.root = 2;
  config.sizes = {1024, 1024, 2.0, 0};
  try {
    make_plan(config, backend, 2, 0);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--root 2 is not a rank (0..1)");
  }
}

// --root reaches the rooted ops only (gather, scatter, reduce, broadcast), the redop the reductions
// only; gather's buffers at 3 ranks of float, 48 B: 4 floats per rank, receive 12 (48 B).
TEST(Plan, RootAndRedopReachTheOpsThatTakeThem) {
  FakeBackend backend;
  RunConfig config;
  config.ops = {Op::sendrecv, Op::gather, Op::scatter, Op::reduce};
  config.root = 2;
  config.redop = RedOp::max;
  config.in_place = InPlaceMode::no;
  config.sizes = {48, 48, 2.0, 0};
  const Plan plan = make_plan(config, backend, 3, 1);
  ASSERT_EQ(plan.ops.size(), 4u);
  const auto only_case = [&](std::size_t i) { return plan.ops[i].sizes.at(0).variants.at(0); };
  EXPECT_EQ(only_case(0).root, -1);
  EXPECT_EQ(only_case(0).redop, RedOp::none);
  EXPECT_EQ(only_case(0).layout.count, 12u);
  EXPECT_EQ(only_case(1).root, 2);
  EXPECT_EQ(only_case(1).layout.count, 4u);
  EXPECT_EQ(only_case(1).layout.recv_elements, 12u);
  EXPECT_EQ(only_case(2).root, 2);
  EXPECT_EQ(only_case(2).layout.send_elements, 12u);
  EXPECT_EQ(only_case(3).root, 2);
  EXPECT_EQ(only_case(3).redop, RedOp::max);
  EXPECT_EQ(plan.send_bytes, 48u);
  EXPECT_EQ(plan.recv_bytes, 48u);
}

TEST(Plan, BufferSumThatWouldWrapSaturates) {
  // -b 8388608T = 2^63 bytes: send + recv = 2^64 wraps to 0 in uint64 arithmetic.
  Plan plan;
  plan.send_bytes = 1ULL << 63;
  plan.recv_bytes = 1ULL << 63;
  EXPECT_EQ(buffer_bytes_needed(plan), UINT64_MAX);
  plan.recv_bytes = (1ULL << 63) - 1;
  EXPECT_EQ(buffer_bytes_needed(plan), UINT64_MAX);
}

}  // namespace
}  // namespace ccbench
