// Workload files and the collectives of a step, against sizes computed by hand in each test.
#include "model/workload.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "workload_error.hpp"

namespace ccbench::model {
namespace {

std::string dense(const std::string& parallel, const std::string& extra = "") {
  return "model: {parameters: 70B, layers: 80, hidden: 8192}\n"
         "dtype: bf16\nsequence_length: 4096\nmicro_batch: 1\n" +
         extra + "parallel: " + parallel + "\n";
}

const StepCollective* find(const std::vector<StepCollective>& step, StepOp op) {
  for (const auto& c : step) {
    if (c.op == op) return &c;
  }
  return nullptr;
}

using test::error_of;

TEST(Workload, Fsdp70bEightWayShardingPerLayer) {
  // 70e9 parameters x 2 bytes (bf16) = 140e9 bytes of weights, and as many of gradients; FSDP wraps
  // each of the 80 layers: a layer is 140e9 / 80 = 1.75e9 bytes.
  const Workload w = parse_workload(dense("{ranks: 8, ranks_per_node: 8, dp: 8}", "sharding: fsdp\n"), "w.yaml");
  const auto step = step_collectives(w);
  ASSERT_EQ(step.size(), 2u);
  const StepCollective* ag = find(step, StepOp::allgather);
  const StepCollective* rs = find(step, StepOp::reduce_scatter);
  ASSERT_TRUE(ag && rs);
  EXPECT_EQ(ag->bytes, 1'750'000'000u);  // the gathered layer
  EXPECT_EQ(ag->count, 160u);            // 80 layers, forward and backward
  EXPECT_EQ(ag->group, 8);
  EXPECT_EQ(ag->nodes, 1);
  EXPECT_TRUE(ag->overlaps);
  EXPECT_EQ(rs->bytes, 1'750'000'000u);
  EXPECT_EQ(rs->count, 80u);
  // Per-rank gradient bytes kept after the step: 140e9 / 8 = 17.5e9.
  EXPECT_DOUBLE_EQ(static_cast<double>(rs->bytes) * static_cast<double>(rs->count) / rs->group, 17.5e9);
}

TEST(Workload, Fp32GradientsDoubleTheReduceScatter) {
  const Workload w =
      parse_workload(dense("{ranks: 8, ranks_per_node: 8, dp: 8}", "sharding: fsdp\ngrad_dtype: fp32\n"), "w.yaml");
  const auto step = step_collectives(w);
  EXPECT_EQ(find(step, StepOp::reduce_scatter)->bytes, 3'500'000'000u);  // 70e9 x 4 / 80
  EXPECT_EQ(find(step, StepOp::allgather)->bytes, 1'750'000'000u);       // weights stay bf16
}

TEST(Workload, HybridShardingAddsAReplicaAllReduce) {
  // 4 nodes; shards of 8 inside a node, 4 replicas across nodes. Each replica all-reduces its
  // 1/8 of a layer's gradients: 1.75e9 / 8 = 218.75e6 bytes, once per layer and micro-batch.
  const Workload w = parse_workload(
      dense("{ranks: 32, ranks_per_node: 8, dp: 32}", "sharding: fsdp\nshard_group: 8\nmicro_batches: 2\n"), "w.yaml");
  const auto step = step_collectives(w);
  ASSERT_EQ(step.size(), 3u);
  EXPECT_EQ(find(step, StepOp::allgather)->nodes, 1);
  EXPECT_EQ(find(step, StepOp::allgather)->count, 320u);  // 2 x 80 x 2 micro-batches
  const StepCollective* ar = find(step, StepOp::allreduce);
  ASSERT_TRUE(ar);
  EXPECT_EQ(ar->bytes, 218'750'000u);
  EXPECT_EQ(ar->group, 4);
  EXPECT_EQ(ar->nodes, 4);
  EXPECT_EQ(ar->ranks_per_node(), 1);
  EXPECT_EQ(ar->count, 160u);
}

TEST(Workload, TensorParallelAllReduceOfActivations) {
  // 1 sequence x 4096 tokens x 8192 hidden x 2 bytes = 67,108,864 bytes, 4 per layer per micro-batch.
  // TP 8 fills a node; the 4 data-parallel replicas of a TP rank sit on 4 nodes, one each.
  const Workload w = parse_workload(
      dense("{ranks: 32, ranks_per_node: 8, tp: 8, dp: 4}", "sharding: fsdp\nmicro_batches: 2\n"), "w.yaml");
  const auto step = step_collectives(w);
  const StepCollective* tp = find(step, StepOp::allreduce);
  ASSERT_TRUE(tp);
  EXPECT_EQ(tp->bytes, 67'108'864u);
  EXPECT_EQ(tp->count, 640u);  // 4 x 80 layers x 2 micro-batches
  EXPECT_EQ(tp->group, 8);
  EXPECT_EQ(tp->nodes, 1);
  EXPECT_FALSE(tp->overlaps);
  // FSDP shards what TP left: 70e9 / 8 x 2 bytes / 80 layers = 218.75e6 bytes per layer.
  const StepCollective* ag = find(step, StepOp::allgather);
  EXPECT_EQ(ag->bytes, 218'750'000u);
  EXPECT_EQ(ag->group, 4);
  EXPECT_EQ(ag->nodes, 4);
}

TEST(Workload, PipelineStagesSplitLayersAndSendActivations) {
  const Workload w =
      parse_workload(dense("{ranks: 16, ranks_per_node: 8, pp: 2, dp: 8}", "sharding: fsdp\n"), "w.yaml");
  const auto step = step_collectives(w);
  const StepCollective* p2p = find(step, StepOp::sendrecv);
  ASSERT_TRUE(p2p);
  EXPECT_EQ(p2p->bytes, 67'108'864u);
  EXPECT_EQ(p2p->count, 2u);
  EXPECT_EQ(p2p->nodes, 2);  // stage 0 on node 0, stage 1 on node 1
  // A stage holds 35e9 parameters in 40 layers: 70e9 bytes / 40 = 1.75e9 bytes per layer.
  EXPECT_EQ(find(step, StepOp::allgather)->bytes, 1'750'000'000u);
  EXPECT_EQ(find(step, StepOp::allgather)->count, 80u);
}

TEST(Workload, DdpBucketsTheGradients) {
  // 100e6 fp32 gradients = 400e6 bytes in 25 MiB (26,214,400 B) buckets: ceil(15.26) = 16 buckets of 25e6.
  const Workload w = parse_workload(
      "model: {parameters: 100M, layers: 12, hidden: 768}\ndtype: fp32\nsequence_length: 1024\nmicro_batch: 8\n"
      "parallel: {ranks: 16, ranks_per_node: 8, dp: 16}\nbucket: 25M\n",
      "w.yaml");
  const auto step = step_collectives(w);
  ASSERT_EQ(step.size(), 1u);
  EXPECT_EQ(step[0].op, StepOp::allreduce);
  EXPECT_EQ(step[0].bytes, 25'000'000u);
  EXPECT_EQ(step[0].count, 16u);
  EXPECT_EQ(step[0].nodes, 2);
  EXPECT_TRUE(step[0].overlaps);
}

TEST(Workload, MoeAllToAllAndExpertGradients) {
  const Workload w = load_workload(std::string(CCBENCH_WORKLOADS) + "/moe-30b-a3b-ep32.yaml");
  const auto step = step_collectives(w);
  ASSERT_EQ(step.size(), 5u);
  // Dispatch/combine: 4096 tokens x top-8 x 2048 hidden x 2 bytes = 134,217,728 bytes,
  // 4 per MoE layer per micro-batch: 4 x 48 x 2 = 384; EP 32 spans 4 nodes.
  EXPECT_EQ(step[0].op, StepOp::alltoall);
  EXPECT_EQ(step[0].bytes, 134'217'728u);
  EXPECT_EQ(step[0].count, 384u);
  EXPECT_EQ(step[0].group, 32);
  EXPECT_EQ(step[0].nodes, 4);
  // Dense part: 30.5e9 - 29e9 = 1.5e9 parameters. ZeRO-1: fp32 gradients 6e9 bytes in 512 MiB
  // buckets: ceil(11.18) = 12 of 500e6; bf16 weights 3e9 bytes: ceil(5.59) = 6 of 500e6.
  EXPECT_EQ(step[1].op, StepOp::allreduce);
  EXPECT_EQ(step[1].bytes, 500'000'000u);
  EXPECT_EQ(step[1].count, 12u);
  EXPECT_EQ(step[1].group, 256);
  EXPECT_EQ(step[1].nodes, 32);
  EXPECT_EQ(step[2].op, StepOp::allgather);
  EXPECT_EQ(step[2].bytes, 500'000'000u);
  EXPECT_EQ(step[2].count, 6u);
  EXPECT_FALSE(step[2].overlaps);
  // Experts: 29e9 / 32 = 906.25e6 per rank, fp32 gradients 3.625e9 bytes: ceil(6.75) = 7 buckets of
  // 517,857,142.86 bytes, among the 256 / 32 = 8 ranks holding the same experts (stride 32: 8 nodes).
  EXPECT_EQ(step[3].op, StepOp::allreduce);
  EXPECT_EQ(step[3].bytes, 517'857'143u);
  EXPECT_EQ(step[3].count, 7u);
  EXPECT_EQ(step[3].group, 8);
  EXPECT_EQ(step[3].nodes, 8);
  EXPECT_EQ(step[4].op, StepOp::allgather);
  EXPECT_EQ(step[4].count, 4u);  // 906.25e6 x 2 = 1.8125e9 bytes: ceil(3.38) = 4 buckets
  EXPECT_EQ(step[4].bytes, 453'125'000u);
}

TEST(Workload, ShippedDense70bJob) {
  const Workload w = load_workload(std::string(CCBENCH_WORKLOADS) + "/dense-70b-fsdp.yaml");
  EXPECT_EQ(w.nodes(), 32);
  const auto step = step_collectives(w);
  ASSERT_EQ(step.size(), 2u);
  EXPECT_EQ(step[0].bytes, 1'750'000'000u);
  EXPECT_EQ(step[0].count, 640u);  // 2 x 80 layers x 4 micro-batches
  EXPECT_EQ(step[0].group, 256);
  EXPECT_EQ(step[0].nodes, 32);
  EXPECT_EQ(step[0].ranks_per_node(), 8);
  EXPECT_EQ(step[1].count, 320u);
}

TEST(Workload, NodesSpanned) {
  EXPECT_EQ(nodes_spanned(8, 1, 8), 1);
  EXPECT_EQ(nodes_spanned(16, 1, 8), 2);
  EXPECT_EQ(nodes_spanned(4, 8, 8), 4);
  EXPECT_EQ(nodes_spanned(8, 2, 8), 2);
  EXPECT_EQ(nodes_spanned(8, 32, 8), 8);
  EXPECT_EQ(nodes_spanned(3, 3, 8), 1);  // ranks 0, 3, 6
  EXPECT_EQ(nodes_spanned(4, 3, 8), 2);  // ranks 0, 3, 6, 9
  EXPECT_EQ(nodes_spanned(4, 12, 8), 4);
  EXPECT_EQ(nodes_spanned(1 << 24, 1, 8), 1 << 21);
}

TEST(WorkloadErrors, UnknownKeyIsNamedWithItsLine) {
  EXPECT_EQ(error_of(dense("{ranks: 8, ranks_per_node: 8, dp: 8}", "shardng: fsdp\n")),
            "w.yaml:5: unknown key 'shardng' (known: name, model, dtype, grad_dtype, sequence_length, micro_batch, "
            "micro_batches, parallel, sharding, shard_group, bucket, checkpoint, serving)");
  EXPECT_EQ(error_of(dense("{ranks: 8, ranks_per_node: 8, dp: 8, cp: 2}")),
            "w.yaml:5: unknown key 'parallel.cp' (known: ranks, ranks_per_node, tp, pp, dp, ep)");
}

TEST(WorkloadErrors, ImpossibleDegrees) {
  EXPECT_EQ(error_of(dense("{ranks: 256, ranks_per_node: 8, tp: 8, dp: 16}")),
            "w.yaml:5: parallel: tp x pp x dp = 8 x 1 x 16 = 128, but ranks is 256");
  EXPECT_EQ(error_of(dense("{ranks: 24, ranks_per_node: 8, dp: 24}", "sharding: fsdp\nshard_group: 16\n")),
            "w.yaml:6: shard_group: 16 does not divide dp (24)");
  EXPECT_EQ(error_of(dense("{ranks: 8, ranks_per_node: 8, dp: 8, ep: 2}")),
            "w.yaml:5: parallel.ep: above 1 needs model.moe");
  EXPECT_EQ(error_of(dense("{ranks: 12, ranks_per_node: 8, dp: 12}")),
            "w.yaml:5: parallel.ranks_per_node: 8 does not divide ranks (12)");
  EXPECT_EQ(error_of(dense("{ranks: 33554432, ranks_per_node: 8, dp: 33554432}")),
            "w.yaml:5: parallel.ranks: 33554432 is above 16777216");
  EXPECT_EQ(error_of(dense("{ranks: 24, ranks_per_node: 8, pp: 3, dp: 8}")),
            "w.yaml:5: parallel.pp: 3 does not divide model.layers (80)");
}

TEST(WorkloadErrors, BadValuesAndMissingKeys) {
  EXPECT_EQ(error_of("model: {parameters: lots, layers: 80, hidden: 8192}\n"),
            "w.yaml:1: model.parameters: 'lots' is not a non-negative number (70e9, 70B, 1.2T)");
  EXPECT_EQ(error_of(dense("{ranks: 8, ranks_per_node: 8}")), "w.yaml:5: missing key 'parallel.dp'");
  EXPECT_EQ(error_of(dense("{ranks: 8, ranks_per_node: 8, dp: 8}", "sharding: zero4\n")),
            "w.yaml:5: sharding: 'zero4' is not one of none, zero1, zero2, zero3, fsdp");
  EXPECT_EQ(error_of("model: {parameters: 1B, layers: 2, hidden: 64}\ndtype: bf16\n"),
            "w.yaml:1: missing key 'sequence_length'");
  EXPECT_EQ(error_of("- a\n- b\n"), "w.yaml: a workload file is a mapping of keys");
  EXPECT_EQ(error_of("model: {parameters: 2e15, layers: 2, hidden: 64}\n"),
            "w.yaml:1: model.parameters: above 1e15 (1000T)");
  EXPECT_EQ(error_of("model: {parameters: 1B, layers: 2, hidden: 1048576}\ndtype: bf16\nsequence_length: 1048576\n"
                     "micro_batch: 2048\n"),
            "w.yaml:4: micro_batch x sequence_length x model.hidden = 2.25e+15 elements: above 2^50");
}

}  // namespace
}  // namespace ccbench::model
