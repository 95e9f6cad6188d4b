// MoE rows of the training plan with a routing (model.moe.routing, docs/model.md "The collectives of
// one step"): the router of `run --moe` over the ep ranks, priced at the most loaded rank's
// off-rank bytes. Pricing curve: time = 10 us + bytes / 100 GB/s, as in plan_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/moe_router.hpp"
#include "core/traffic_matrix.hpp"
#include "model/plan.hpp"
#include "model/workload.hpp"
#include "report/plan_table.hpp"

namespace ccbench::model {
namespace {

Prediction linear(const PredictQuery& q) {
  Prediction p;
  p.time_us = 10 + static_cast<double>(q.bytes) / 100e3;
  p.time_lo_us = 0.9 * p.time_us;
  p.time_hi_us = 1.1 * p.time_us;
  p.profile = q.profile;
  return p;
}

// 8 experts on 8 ranks (one each), top-1, 1024 tokens of 768 fp32 per rank and micro-batch.
std::string moe_workload(const std::string& routing) {
  return "model: {parameters: 100M, layers: 12, hidden: 768, moe: {experts: 8, top_k: 1, expert_parameters: 50M, " +
         routing +
         "}}\ndtype: fp32\nsequence_length: 1024\nmicro_batch: 1\nparallel: {ranks: 8, ranks_per_node: 8, dp: 8, "
         "ep: 8}\n";
}

constexpr std::uint64_t kMeanBytes = 1024ULL * 768 * 4;  // 3145728: one rank's tokens

// hot:0:1 sends every token to expert 0 on rank 0: rank 0 receives 7 x the mean off rank, while the
// mean rank sends 7/8 of the mean off rank: L = 7 x 3145728 = 22020096, imbalance 8.
TEST(PlanMoe, HotRoutingIsPricedAtTheMostLoadedRanksBytes) {
  std::vector<PredictQuery> queries;
  const Pricer recording = [&](const PredictQuery& q) {
    queries.push_back(q);
    return linear(q);
  };
  const Plan plan =
      make_plan(parse_workload(moe_workload("routing: 'hot:0:1'"), "hot.yaml"), {"A"}, recording, std::nullopt);
  const auto& rows = plan.profiles[0].rows;
  ASSERT_GE(rows.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(rows[i].step.op, i == 0 ? StepOp::moe_dispatch : StepOp::moe_combine);
    EXPECT_EQ(rows[i].step.bytes, kMeanBytes);
    EXPECT_EQ(rows[i].step.most_loaded_bytes, 7 * kMeanBytes);
    EXPECT_DOUBLE_EQ(rows[i].step.off_rank_imbalance, 8);
    EXPECT_EQ(rows[i].step.count, 24u);  // forward and backward, 12 MoE layers, one micro-batch
    ASSERT_TRUE(rows[i].priced);
    EXPECT_EQ(rows[i].note, "");
    EXPECT_DOUBLE_EQ(rows[i].per_call.time_us, 10 + 7.0 * kMeanBytes / 100e3);
    EXPECT_DOUBLE_EQ(rows[i].step_us.value, 24 * (10 + 7.0 * kMeanBytes / 100e3));
  }
  EXPECT_EQ(queries[0].op, Op::moe_dispatch);
  EXPECT_EQ(queries[0].bytes, 7 * kMeanBytes);
  EXPECT_EQ(queries[1].op, Op::moe_combine);
}

// The plan document records the router's spec and seed (what `run --moe` measures) and each routed
// row's L and imbalance; the text names the spec.
TEST(PlanMoe, DocumentAndTextNameTheRouting) {
  const Plan plan =
      make_plan(parse_workload(moe_workload("routing: 'hot:0:1'"), "hot.yaml"), {"A"}, linear, std::nullopt);
  const nlohmann::json j = to_json(plan);
  EXPECT_EQ(j["workload"]["moe_routing"], (nlohmann::json{{"spec", "8,1,1024,768,hot:0:1"}, {"seed", 1}}));
  EXPECT_EQ(j["collectives"][0]["most_loaded_bytes"], 7 * kMeanBytes);
  EXPECT_EQ(j["collectives"][0]["off_rank_imbalance"], 8.0);
  EXPECT_FALSE(j["collectives"][2].contains("most_loaded_bytes"));
  const std::string text = report::plan_text(j);
  EXPECT_NE(text.find("; 8 experts, top-1, 50M expert parameters, routed as run --moe 8,1,1024,768,hot:0:1 --seed 1\n"),
            std::string::npos)
      << text;
}

// Without a curve for the MoE ops: an all-to-all in which every rank moves L, S' = L x 8 / 7 =
// 8 x the mean = the imbalance x the mean.
TEST(PlanMoe, WithoutAMoeCurveAnAllToAllOfImbalanceTimesTheMean) {
  const Pricer no_moe = [](const PredictQuery& q) {
    if (q.op == Op::moe_dispatch || q.op == Op::moe_combine) throw UsageError("--op: no fit");
    return linear(q);
  };
  const Plan plan =
      make_plan(parse_workload(moe_workload("routing: 'hot:0:1'"), "hot.yaml"), {"A"}, no_moe, std::nullopt);
  const auto& dispatch = plan.profiles[0].rows[0];
  ASSERT_TRUE(dispatch.priced);
  EXPECT_DOUBLE_EQ(dispatch.per_call.time_us, 10 + 8.0 * kMeanBytes / 100e3);
  EXPECT_EQ(dispatch.note,
            "an all-to-all of 25165824 bytes, in which every rank moves the most loaded rank's 22020096 off-rank "
            "bytes (no curve for this op)");
}

// The seeded router of `run --moe`: the same most loaded rank's bytes as the spec and seed give there.
TEST(PlanMoe, ZipfRoutingUsesRunsRouterAndSeed) {
  const Workload w = parse_workload(moe_workload("routing: 'zipf:1.2', seed: 7"), "zipf.yaml");
  const MoeRoute route = route_tokens(parse_moe_spec("8,1,1024,768,zipf:1.2"), 8, 7);
  const MatrixLoad load = load_of(dispatch_matrix(route, 768, 4));
  const auto rows = step_collectives(w);
  ASSERT_EQ(rows[0].op, StepOp::moe_dispatch);
  EXPECT_EQ(rows[0].most_loaded_bytes, load.most_loaded_off_rank_bytes);
  EXPECT_GT(rows[0].off_rank_imbalance, 1.5);  // zipf 1.2 over 8 experts: expert 0 draws ~44%
}

// The shipped skewed job (docs/model.md's example): the router of `run --moe
// 128,8,4096,2048,hot:0:0.3` on 32 ranks with seed 1, bf16.
TEST(PlanMoe, ShippedHotJobIsRunsRoute) {
  const Workload w = load_workload(std::string(CCBENCH_WORKLOADS) + "/moe-30b-a3b-ep32-hot.yaml");
  ASSERT_TRUE(w.routing);
  EXPECT_EQ(w.routing->routing, MoeRouting::hot);
  EXPECT_DOUBLE_EQ(w.routing->hot_fraction, 0.3);
  EXPECT_EQ(w.routing_seed, 1u);
  const MoeRoute route = route_tokens(parse_moe_spec("128,8,4096,2048,hot:0:0.3"), 32, 1);
  const MatrixLoad load = load_of(dispatch_matrix(route, 2048, 2));
  const auto rows = step_collectives(w);
  EXPECT_EQ(rows[0].most_loaded_bytes, load.most_loaded_off_rank_bytes);
  EXPECT_EQ(rows[0].bytes, 4096ULL * 8 * 2048 * 2);  // 128 MiB: the mean rank's send buffer
  EXPECT_DOUBLE_EQ(rows[0].off_rank_imbalance,
                   static_cast<double>(load.most_loaded_off_rank_bytes) / load.mean_off_rank_send_bytes);
  EXPECT_GT(rows[0].off_rank_imbalance, 2);  // 30% of first choices on one of 32 ranks
}

TEST(PlanMoe, BadRoutingAndSeedNameTheKeyAndFile) {
  const auto error_of = [](const std::string& yaml) -> std::string {
    try {
      parse_workload(yaml, "w.yaml");
    } catch (const ParseError& e) {
      return e.what();
    }
    return "(no error)";
  };
  const std::string bad = error_of(moe_workload("routing: lumpy"));
  EXPECT_EQ(bad.rfind("w.yaml:1: model.moe.routing: 'lumpy' is not uniform, zipf:S or hot:E:FRACTION (", 0), 0u) << bad;
  EXPECT_EQ(error_of(moe_workload("seed: 3")), "w.yaml:1: model.moe.seed: only with model.moe.routing");
}

}  // namespace
}  // namespace ccbench::model
