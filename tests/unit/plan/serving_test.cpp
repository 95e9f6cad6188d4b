// A serving workload (`serving:`, docs/model.md "Planning a serving step"): the collectives of one
// request's prefill, KV transfer and decode step against sizes computed by hand, its bad keys, and
// its pricing (the decode step at the percentile, the request's total, the migration per phase) on a
// curve with known parameters.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "core/moe_router.hpp"
#include "core/types.hpp"
#include "model/plan.hpp"
#include "model/workload.hpp"
#include "report/plan_table.hpp"
#include "workload_error.hpp"

namespace ccbench::model {
namespace {

// 80 layers, hidden 8192, bf16. Decode: 32 ranks = 4 nodes x 8, tp 8, pp 2, dp 2. Prefill on ranks
// of its own at tp 4, pp 2, two prompts at once.
const char* const kDisaggregated =
    "model: {parameters: 70B, layers: 80, hidden: 8192}\ndtype: bf16\n"
    "parallel: {ranks: 32, ranks_per_node: 8, tp: 8, pp: 2, dp: 2}\n"
    "serving:\n  batch: 64\n  prompt_tokens: 4096\n  generated_tokens: 512\n  kv_bytes_per_token: 327680\n"
    "  disaggregated: true\n  prefill: {batch: 2, tp: 4, pp: 2}\n";

using test::error_of;

TEST(Serving, DisaggregatedRequestRowsByHand) {
  const Workload w = parse_workload(kDisaggregated, "w.yaml");
  ASSERT_TRUE(w.serving);
  EXPECT_EQ(w.serving->percentile, 99);  // the default
  const auto rows = step_collectives(w);
  ASSERT_EQ(rows.size(), 5u);
  // Prefill: 2 x 4096 tokens x 8192 x 2 bytes = 134217728 per TP all-reduce, 2 per layer over all
  // 80 layers (the stages run in turn on a request's path).
  EXPECT_EQ(rows[0].phase, Phase::prefill);
  EXPECT_EQ(rows[0].op, StepOp::allreduce);
  EXPECT_EQ(rows[0].bytes, 134217728u);
  EXPECT_EQ(rows[0].group, 4);
  EXPECT_EQ(rows[0].nodes, 1);
  EXPECT_EQ(rows[0].count, 160u);
  EXPECT_EQ(rows[0].percentile, 0);
  EXPECT_EQ(rows[0].per_request, 1);
  // One stage boundary: the activation over tp, 33554432 bytes; stages tp x ep = 4 ranks apart.
  EXPECT_EQ(rows[1].op, StepOp::sendrecv);
  EXPECT_EQ(rows[1].bytes, 33554432u);
  EXPECT_EQ(rows[1].count, 1u);
  EXPECT_EQ(rows[1].nodes, 1);
  // KV: 4096 x 327680 bytes over tp x pp = 8 shards = 167772160 bytes a pair, prefill node to decode node.
  EXPECT_EQ(rows[2].phase, Phase::kv_transfer);
  EXPECT_EQ(rows[2].op, StepOp::sendrecv);
  EXPECT_EQ(rows[2].bytes, 167772160u);
  EXPECT_EQ(rows[2].nodes, 2);
  EXPECT_EQ(rows[2].count, 1u);
  // Decode: 64 x 8192 x 2 = 1048576 bytes per all-reduce at the p99, 512 steps a request; its stage
  // boundary 131072 bytes, tp x dp = 16 ranks apart: two nodes.
  EXPECT_EQ(rows[3].phase, Phase::decode);
  EXPECT_EQ(rows[3].bytes, 1048576u);
  EXPECT_EQ(rows[3].group, 8);
  EXPECT_EQ(rows[3].count, 160u);
  EXPECT_EQ(rows[3].percentile, 99);
  EXPECT_EQ(rows[3].per_request, 512);
  EXPECT_EQ(rows[4].op, StepOp::sendrecv);
  EXPECT_EQ(rows[4].bytes, 131072u);
  EXPECT_EQ(rows[4].nodes, 2);
  EXPECT_EQ(rows[4].per_request, 512);
}

TEST(Serving, ColocatedHasNoKvTransferAndTheMedianIsAPercentileChoice) {
  const Workload w = parse_workload(
      "model: {parameters: 8B, layers: 32, hidden: 4096}\ndtype: bf16\n"
      "parallel: {ranks: 8, ranks_per_node: 8, tp: 8, dp: 1}\n"
      "serving: {batch: 16, prompt_tokens: 1000, generated_tokens: 100, kv_bytes_per_token: 128K, percentile: "
      "median}\n",
      "w.yaml");
  const auto rows = step_collectives(w);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].phase, Phase::prefill);
  EXPECT_EQ(rows[0].bytes, 1000u * 4096 * 2);
  EXPECT_EQ(rows[1].phase, Phase::decode);
  EXPECT_EQ(rows[1].bytes, 16u * 4096 * 2);
  EXPECT_EQ(rows[1].percentile, 0);
  EXPECT_EQ(rows[1].per_request, 100);
}

TEST(Serving, RoutedExpertsAreTheRunMoeMatrixOfEachPhasesTokens) {
  const Workload w = parse_workload(
      "model:\n  parameters: 30.5B\n  layers: 48\n  hidden: 2048\n"
      "  moe: {experts: 128, top_k: 8, expert_parameters: 29B, routing: 'hot:0:0.3', seed: 1}\n"
      "dtype: bf16\nparallel: {ranks: 16, ranks_per_node: 8, dp: 16, ep: 16}\n"
      "serving: {batch: 128, prompt_tokens: 2048, generated_tokens: 256, kv_bytes_per_token: 96K}\n",
      "w.yaml");
  const auto rows = step_collectives(w);
  ASSERT_EQ(rows.size(), 4u);
  // Each phase's matrix is run --moe's with that phase's tokens per rank (prefill 2048, decode 128).
  for (const auto& [index, tokens] : {std::pair{0, 2048}, std::pair{2, 128}}) {
    const MoeSpec spec = parse_moe_spec(fmt::format("128,8,{},2048,hot:0:0.3", tokens));
    const MatrixLoad load = load_of(dispatch_matrix(route_tokens(spec, 16, 1), 2048, 2));
    for (int k = 0; k < 2; ++k) {
      const StepCollective& c = rows[static_cast<std::size_t>(index + k)];
      EXPECT_EQ(c.op, k == 0 ? StepOp::moe_dispatch : StepOp::moe_combine);
      EXPECT_EQ(c.most_loaded_bytes, load.most_loaded_off_rank_bytes) << "row " << index + k;
      EXPECT_EQ(c.count, 48u);
      EXPECT_EQ(c.nodes, 2);
      EXPECT_DOUBLE_EQ(c.off_rank_imbalance,
                       static_cast<double>(load.most_loaded_off_rank_bytes) / load.mean_off_rank_send_bytes);
      EXPECT_GT(c.off_rank_imbalance, 1.2);  // 30% of first choices on one expert's rank
    }
  }
  EXPECT_EQ(rows[2].phase, Phase::decode);
  EXPECT_EQ(rows[2].percentile, 99);
  // Unrouted: an even all-to-all of tokens x top_k x hidden x 2 bytes, dispatch and combine per MoE layer.
  const Workload even = parse_workload(
      "model:\n  parameters: 30.5B\n  layers: 48\n  hidden: 2048\n  moe: {experts: 128, top_k: 8, expert_parameters: "
      "29B}\n"
      "dtype: bf16\nparallel: {ranks: 16, ranks_per_node: 8, dp: 16, ep: 16}\n"
      "serving: {batch: 128, prompt_tokens: 2048, generated_tokens: 256, kv_bytes_per_token: 96K}\n",
      "w.yaml");
  const auto flat = step_collectives(even);
  ASSERT_EQ(flat.size(), 2u);
  EXPECT_EQ(flat[1].op, StepOp::alltoall);
  EXPECT_EQ(flat[1].bytes, 128u * 8 * 2048 * 2);
  EXPECT_EQ(flat[1].count, 96u);
}

TEST(Serving, BadKeysAreNamedWithTheirLine) {
  const std::string base =
      "model: {parameters: 8B, layers: 32, hidden: 4096}\ndtype: bf16\n"
      "parallel: {ranks: 8, ranks_per_node: 8, tp: 8, dp: 1}\n";
  EXPECT_EQ(error_of(base + "micro_batch: 4\nserving: {batch: 1, prompt_tokens: 1, generated_tokens: 1, "
                            "kv_bytes_per_token: 1}\n"),
            "w.yaml:4: micro_batch: a training key; a serving workload (serving:) gives prompt_tokens, "
            "generated_tokens and batch instead");
  EXPECT_EQ(error_of(base + "serving: {prompt_tokens: 1, generated_tokens: 1, kv_bytes_per_token: 1}\n"),
            "w.yaml:4: missing key 'serving.batch'");
  EXPECT_EQ(error_of(base + "serving: {batch: 1, prompt_tokens: 1, generated_tokens: 1, kv_bytes_per_token: 1, "
                            "percentile: 100}\n"),
            "w.yaml:4: serving.percentile: '100' is not median or a level strictly between 0 and 100 (99, 99.9)");
  EXPECT_EQ(error_of(base + "serving: {batch: 1, prompt_tokens: 1, generated_tokens: 1, kv_bytes_per_token: 1, "
                            "disaggregated: yes}\n"),
            "w.yaml:4: serving.disaggregated: 'yes' is not true or false");
  EXPECT_EQ(error_of(base + "serving: {batch: 1, prompt_tokens: 1, generated_tokens: 1, kv_bytes_per_token: 1, "
                            "prefill: {tp: 2}}\n"),
            "w.yaml:4: serving.prefill: a layout of its own needs serving.disaggregated: true (colocated prefill "
            "runs on the decode ranks, in their layout)");
  EXPECT_EQ(error_of(base + "serving: {batch: 1, prompt_tokens: 1, generated_tokens: 1, kv_bytes_per_token: 1, "
                            "disaggregated: true, prefill: {pp: 3}}\n"),
            "w.yaml:4: serving.prefill.pp: 3 does not divide model.layers (32)");
  EXPECT_EQ(error_of(base + "serving: {batch: 1, prompt_tokens: 1, generated_tokens: 1, kv_bytes_per_token: 1, "
                            "tokens: 3}\n"),
            "w.yaml:4: unknown key 'serving.tokens' (known: batch, prompt_tokens, generated_tokens, "
            "kv_bytes_per_token, percentile, disaggregated, prefill)");
}

// 10 us + S / 100 GB/s at the median, twice that at any percentile; a band of -10% / +10%; profile
// B twice as fast in bytes. `no_percentile`: the percentile curve is missing.
Pricer known_curve(bool no_percentile = false) {
  return [no_percentile](const PredictQuery& q) {
    if (q.percentile > 0 && no_percentile) throw UsageError("no p99 model");
    const double gbps = q.profile == "A" ? 100 : 200;
    Prediction p;
    p.time_us = (q.percentile > 0 ? 2 : 1) * (10 + static_cast<double>(q.bytes) / (gbps * 1e3));
    p.time_lo_us = 0.9 * p.time_us;
    p.time_hi_us = 1.1 * p.time_us;
    p.profile = q.profile;
    return p;
  };
}

const char* const kSmall =
    "model: {parameters: 8B, layers: 32, hidden: 4096}\ndtype: bf16\n"
    "parallel: {ranks: 16, ranks_per_node: 8, tp: 8, dp: 2}\n"
    "serving: {batch: 16, prompt_tokens: 1000, generated_tokens: 100, kv_bytes_per_token: 128K, disaggregated: true}\n";

TEST(Serving, PricesThePhasesAndTheRequest) {
  const Plan plan = make_plan(parse_workload(kSmall, "w.yaml"), {"A", "B"}, known_curve(),
                              std::pair<std::string, std::string>{"A", "B"});
  const ProfilePlan& a = plan.profiles[0];
  ASSERT_EQ(a.rows.size(), 3u);
  // Prefill: 64 x (10 + 8192000 / 1e5) = 64 x 91.92 us; KV: 1000 x 128K (a count: 128000) / 8 =
  // 16000000 bytes, 10 + 160 us; decode: 64 x 2 x (10 + 131072 / 1e5) us at the p99.
  const double prefill = 64 * (10 + 8192000 / 1e5);
  const double kv = 10 + 16000000 / 1e5;
  const double decode = 64 * 2 * (10 + 131072 / 1e5);
  ASSERT_EQ(a.phases.size(), 3u);
  EXPECT_EQ(a.phases[0].phase, Phase::prefill);
  EXPECT_DOUBLE_EQ(a.phases[0].total_us.value, prefill);
  EXPECT_DOUBLE_EQ(a.phases[1].total_us.value, kv);
  EXPECT_DOUBLE_EQ(a.phases[2].total_us.value, decode);
  EXPECT_DOUBLE_EQ(a.rows[2].per_call.time_us, 2 * (10 + 131072 / 1e5));
  // The request: prefill + KV + 100 decode steps.
  EXPECT_NEAR(a.total_us.value, prefill + kv + 100 * decode, 1e-6);
  EXPECT_NEAR(a.total_us.hi, 1.1 * (prefill + kv + 100 * decode), 1e-6);
  // The migration per phase: B's decode step over A's, and the request weighed the same way.
  ASSERT_TRUE(plan.migration);
  const Migration& m = *plan.migration;
  ASSERT_EQ(m.phases.size(), 3u);
  const double decode_b = 64 * 2 * (10 + 131072 / 2e5);
  EXPECT_NEAR(m.phases[2].ratio.value, decode_b / decode, 1e-12);
  EXPECT_NEAR(m.phases[2].ratio.lo, 0.9 * decode_b / (1.1 * decode), 1e-12);
  const double request_b = 64 * (10 + 8192000 / 2e5) + (10 + 16000000 / 2e5) + 100 * decode_b;
  EXPECT_NEAR(m.ratio_total.value, request_b / (prefill + kv + 100 * decode), 1e-12);
}

TEST(Serving, WithoutAPercentileCurveTheDecodeStepIsNotPricedAndSaysWhy) {
  const Plan plan = make_plan(parse_workload(kSmall, "w.yaml"), {"A"}, known_curve(true), std::nullopt);
  const ProfilePlan& a = plan.profiles[0];
  EXPECT_TRUE(a.rows[0].priced);
  EXPECT_FALSE(a.rows[2].priced);
  EXPECT_EQ(a.rows[2].note, "not priced: no p99 model");
  EXPECT_EQ(a.phases[2].unpriced, 1);
  EXPECT_EQ(a.unpriced, 1);
  const std::string text = report::plan_text(to_json(plan));
  EXPECT_NE(text.find("decode step (p99)"), std::string::npos) << text;
  EXPECT_NE(text.find("not priced"), std::string::npos) << text;
}

TEST(Serving, TheDocumentCarriesPhasesOnlyForServing) {
  const nlohmann::json serving = to_json(make_plan(parse_workload(kSmall, "w.yaml"), {"A", "B"}, known_curve(),
                                                   std::pair<std::string, std::string>{"A", "B"}));
  EXPECT_EQ(serving["collectives"][2]["phase"], "decode");
  EXPECT_EQ(serving["collectives"][2]["percentile"], 99);
  EXPECT_EQ(serving["collectives"][2]["per_request"], 100);
  EXPECT_EQ(serving["profiles"][0]["phases"][1]["phase"], "kv_transfer");
  EXPECT_EQ(serving["migration"]["phases"].size(), 3u);
  EXPECT_EQ(serving["workload"]["serving"]["generated_tokens"], 100);
  EXPECT_FALSE(serving["workload"].contains("micro_batch"));
  EXPECT_NO_THROW(report::check_plan_document(serving, "plan.json"));
  const std::string text = report::plan_text(serving);
  EXPECT_NE(text.find("per request (100 decode steps)"), std::string::npos) << text;
  EXPECT_NE(text.find("KV transfer"), std::string::npos) << text;
  const nlohmann::json training = to_json(make_plan(
      parse_workload("model: {parameters: 100M, layers: 12, hidden: 768}\ndtype: fp32\nsequence_length: 1024\n"
                     "micro_batch: 8\nparallel: {ranks: 16, ranks_per_node: 8, dp: 16}\n",
                     "t.yaml"),
      {"A"}, known_curve(), std::nullopt));
  EXPECT_FALSE(training["collectives"][0].contains("phase"));
  EXPECT_FALSE(training["profiles"][0].contains("phases"));
}

}  // namespace
}  // namespace ccbench::model
