// Pricing a step and the migration interval, on a pricing curve with known parameters:
// time = 10 us + S / bandwidth, with a band of -10% / +10%.
#include "model/plan.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace ccbench::model {
namespace {

// Profile "A": 100 GB/s, "B": 200 GB/s. With `no_allgather`, all-gathers have no curve.
Pricer known_curve(bool no_allgather = false) {
  return [no_allgather](const PredictQuery& q) {
    if (no_allgather && q.op == Op::allgather) throw UsageError("allgather: not fitted");
    if (q.profile != "A" && q.profile != "B") throw UsageError("unknown profile " + q.profile);
    const double gbps = q.profile == "A" ? 100 : 200;
    Prediction p;
    p.time_us = 10 + static_cast<double>(q.bytes) / (gbps * 1e3);
    p.time_lo_us = 0.9 * p.time_us;
    p.time_hi_us = 1.1 * p.time_us;
    p.profile = q.profile;
    p.extrapolated = q.nodes > 2;
    return p;
  };
}

// ZeRO-1, 100e6 fp32 parameters on 2 nodes x 8: 16 all-reduce buckets of 25e6 bytes (overlapped)
// and 16 all-gather buckets of 25e6 bytes after the step (not overlapped).
Workload zero1() {
  return parse_workload(
      "model: {parameters: 100M, layers: 12, hidden: 768}\ndtype: fp32\nsequence_length: 1024\nmicro_batch: 8\n"
      "parallel: {ranks: 16, ranks_per_node: 8, dp: 16}\nsharding: zero1\nbucket: 25M\n",
      "zero1.yaml");
}

TEST(Plan, PricesEachRowAndSumsTheStep) {
  const Plan plan = make_plan(zero1(), {"A", "B"}, known_curve(), std::nullopt);
  ASSERT_EQ(plan.profiles.size(), 2u);
  const ProfilePlan& a = plan.profiles[0];
  ASSERT_EQ(a.rows.size(), 2u);
  // 10 + 25e6 / 1e5 = 260 us per call, 16 calls: 4160 us [3744, 4576].
  EXPECT_DOUBLE_EQ(a.rows[0].per_call.time_us, 260);
  EXPECT_DOUBLE_EQ(a.rows[0].step_us.value, 4160);
  EXPECT_DOUBLE_EQ(a.total_us.value, 8320);
  EXPECT_DOUBLE_EQ(a.total_us.lo, 7488);
  EXPECT_DOUBLE_EQ(a.total_us.hi, 9152);
  EXPECT_DOUBLE_EQ(a.exposed_us.value, 4160);  // only the all-gather after the step
  EXPECT_EQ(a.unpriced, 0);
  EXPECT_FALSE(a.extrapolated);
  // B: 10 + 125 = 135 us per call.
  EXPECT_DOUBLE_EQ(plan.profiles[1].total_us.value, 4320);
}

TEST(Plan, MigrationDeltaAndRatioIntervals) {
  const Plan plan = make_plan(zero1(), {"A", "B"}, known_curve(), std::pair<std::string, std::string>{"A", "B"});
  ASSERT_TRUE(plan.migration);
  const Migration& m = *plan.migration;
  EXPECT_EQ(m.rows_compared, 2);
  // A: 8320 [7488, 9152]; B: 4320 [3888, 4752]. Delta B - A = -4000, interval from the ends:
  // [3888 - 9152, 4752 - 7488] = [-5264, -2736].
  EXPECT_DOUBLE_EQ(m.delta_total_us.value, -4000);
  EXPECT_DOUBLE_EQ(m.delta_total_us.lo, -5264);
  EXPECT_DOUBLE_EQ(m.delta_total_us.hi, -2736);
  // Ratio 4320 / 8320 = 0.51923..., [3888 / 9152, 4752 / 7488].
  EXPECT_DOUBLE_EQ(m.ratio_total.value, 4320.0 / 8320.0);
  EXPECT_DOUBLE_EQ(m.ratio_total.lo, 3888.0 / 9152.0);
  EXPECT_DOUBLE_EQ(m.ratio_total.hi, 4752.0 / 7488.0);
  // Exposed: the all-gather alone: A 4160 [3744, 4576], B 2160 [1944, 2376].
  EXPECT_DOUBLE_EQ(m.delta_exposed_us.value, -2000);
  EXPECT_DOUBLE_EQ(m.delta_exposed_us.lo, 1944 - 4576);
  EXPECT_DOUBLE_EQ(m.delta_exposed_us.hi, 2376 - 3744);
}

TEST(Plan, AllGatherWithoutACurveIsHalfAnAllReduce) {
  const Plan plan = make_plan(zero1(), {"A"}, known_curve(/*no_allgather=*/true), std::nullopt);
  const PricedCollective& ag = plan.profiles[0].rows[1];
  ASSERT_TRUE(ag.priced);
  EXPECT_DOUBLE_EQ(ag.per_call.time_us, 130);  // 260 / 2
  EXPECT_DOUBLE_EQ(ag.per_call.time_hi_us, 143);
  EXPECT_EQ(ag.note, "half an all-reduce of the same size (no curve for this op)");
}

// No broadcast curve: at the all-reduce's bus bandwidth a broadcast of S moves S, the all-reduce
// 2(n-1)/n x S; on 2 nodes x 8 = 16 ranks a broadcast takes 16 / 30 of the all-reduce.
TEST(Plan, BroadcastWithoutACurveIsItsShareOfAnAllReduceAtEqualBusBandwidth) {
  const Pricer only_allreduce = [](const PredictQuery& q) {
    if (q.op != Op::allreduce) throw UsageError("broadcast: not fitted");
    Prediction p;
    p.time_us = 300;  // 10 + 29e6 / 1e5
    p.time_lo_us = 270;
    p.time_hi_us = 330;
    return p;
  };
  const CallPrice b = price_call({Op::broadcast, 29'000'000, 2, 8, "A"}, only_allreduce);
  ASSERT_TRUE(b.priced);
  EXPECT_DOUBLE_EQ(b.per_call.time_us, 300.0 * 16 / 30);  // 160
  EXPECT_DOUBLE_EQ(b.per_call.time_lo_us, 270.0 * 16 / 30);
  EXPECT_DOUBLE_EQ(b.per_call.time_hi_us, 330.0 * 16 / 30);
  EXPECT_EQ(b.note,
            "0.533 x an all-reduce of the same size (a broadcast moves S, an all-reduce 2(n-1)/n x S on n = 16 ranks, "
            "at equal bus bandwidth; no curve for this op)");
  // 2 ranks: the all-reduce moves S too, so the broadcast takes the all-reduce's time.
  EXPECT_DOUBLE_EQ(price_call({Op::broadcast, 29'000'000, 1, 2, "A"}, only_allreduce).per_call.time_us, 300);
  // A layout left to the model (ranks per node 0): n unknown, so not priced, with the reason.
  const CallPrice unknown = price_call({Op::broadcast, 29'000'000, 2, 0, "A"}, only_allreduce);
  EXPECT_FALSE(unknown.priced);
  EXPECT_EQ(unknown.note, "not priced: broadcast: not fitted");
}

TEST(Plan, BothReasonsWhenTheHalfAllReduceCannotBePricedEither) {
  const Plan plan = make_plan(zero1(), {"C"}, known_curve(/*no_allgather=*/true), std::nullopt);
  const PricedCollective& ag = plan.profiles[0].rows[1];
  EXPECT_FALSE(ag.priced);
  EXPECT_EQ(ag.note, "not priced: allgather: not fitted; nor as half an all-reduce: unknown profile C");
}

// pp 2 x dp 8 on 2 nodes of 8: the stages' send/recv pair spans 2 nodes; activations of
// 8 x 1024 x 768 fp32 = 25165824 bytes, sent forward and their gradients back: 2 calls a step.
Workload two_stages() {
  return parse_workload(
      "model: {parameters: 100M, layers: 12, hidden: 768}\ndtype: fp32\nsequence_length: 1024\nmicro_batch: 8\n"
      "parallel: {ranks: 16, ranks_per_node: 8, pp: 2, dp: 8}\n",
      "pp.yaml");
}

TEST(Plan, PipelineSendRecvIsPricedFromTheSendrecvCurveAtItsOwnLayout) {
  std::vector<PredictQuery> sendrecv_queries;
  const Pricer curve = known_curve();
  const Pricer recording = [&](const PredictQuery& q) {
    if (q.op == Op::sendrecv) sendrecv_queries.push_back(q);
    return curve(q);
  };
  const Plan plan = make_plan(two_stages(), {"A"}, recording, std::nullopt);
  const PricedCollective& row = plan.profiles[0].rows[0];
  ASSERT_EQ(row.step.op, StepOp::sendrecv);
  ASSERT_TRUE(row.priced) << row.note;
  EXPECT_EQ(row.note, "");
  EXPECT_DOUBLE_EQ(row.per_call.time_us, 10 + 25165824 / 100e3);
  EXPECT_DOUBLE_EQ(row.step_us.value, 2 * (10 + 25165824 / 100e3));
  ASSERT_EQ(sendrecv_queries.size(), 1u);
  EXPECT_EQ(sendrecv_queries[0].bytes, 25165824u);
  EXPECT_EQ(sendrecv_queries[0].nodes, 2);
  EXPECT_EQ(sendrecv_queries[0].ranks_per_node, 0);  // the curve's most measured layout
  EXPECT_EQ(plan.profiles[0].unpriced, 0);
}

TEST(Plan, RowsTheModelCannotPriceAreListedAndLeftOutOfTheMigration) {
  // The pricer has no sendrecv curve (as a model fitted without `run --op sendrecv` rows); profile C
  // is unknown to it.
  const Pricer curve = known_curve();
  const Pricer no_sendrecv = [&](const PredictQuery& q) {
    if (q.op == Op::sendrecv) throw UsageError("--op: the model has no fit for sendrecv (fitted: allreduce)");
    return curve(q);
  };
  const Plan plan = make_plan(two_stages(), {"A", "C"}, no_sendrecv, std::pair<std::string, std::string>{"A", "C"});
  const ProfilePlan& a = plan.profiles[0];
  ASSERT_EQ(a.rows.size(), 2u);
  EXPECT_EQ(a.rows[0].step.op, StepOp::sendrecv);
  EXPECT_FALSE(a.rows[0].priced);
  EXPECT_EQ(a.rows[0].note, "not priced: --op: the model has no fit for sendrecv (fitted: allreduce)");
  EXPECT_EQ(a.unpriced, 1);
  EXPECT_EQ(plan.profiles[1].unpriced, 2);
  EXPECT_EQ(plan.profiles[1].rows[1].note, "not priced: unknown profile C");
  EXPECT_EQ(plan.migration->rows_compared, 0);
  EXPECT_TRUE(std::isnan(plan.migration->ratio_total.value));
}

TEST(Plan, MigrationNeedsPricedProfiles) {
  try {
    make_plan(zero1(), {"A"}, known_curve(), std::pair<std::string, std::string>{"A", "B"});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--migrate A:B: both profiles must be among those priced");
  }
}

TEST(Plan, JsonDocument) {
  const auto j = to_json(make_plan(zero1(), {"A", "B"}, known_curve(), std::pair<std::string, std::string>{"A", "B"}));
  EXPECT_EQ(j["plan_version"], 1);
  EXPECT_EQ(j["workload"]["nodes"], 2);
  EXPECT_EQ(j["collectives"][1]["op"], "allgather");
  EXPECT_EQ(j["collectives"][1]["bytes"], 25'000'000u);
  EXPECT_EQ(j["profiles"][0]["rows"][0]["step_us"]["value"], 4160.0);
  EXPECT_EQ(j["migration"]["delta_total_us"]["lo"], -5264.0);
}

}  // namespace
}  // namespace ccbench::model
