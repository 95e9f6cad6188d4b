// The workload -> shard arithmetic against MLPerf Storage's checkpointing table (8B on 8 ranks
// 105 GB, 70B on 64 ranks 912 GB; its "GB" are GiB), and 405B's TP 8 x PP 32 x DP 2 layout.
#include "checkpoint/shard_plan.hpp"

#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "model/workload.hpp"

namespace ccbench::checkpoint {
namespace {

const std::string kSource = CCBENCH_SOURCE_DIR;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

ShardPlan from_file(const std::string& name) {
  return plan_from_workload(model::load_workload(kSource + "/configs/workloads/" + name));
}

TEST(ShardPlan, Llama8bOn8RanksIsMlperfs105GB) {
  const ShardPlan p = from_file("llama3-8b-mlperf-storage.yaml");
  EXPECT_EQ(p.writers, 8);
  EXPECT_NEAR(static_cast<double>(p.model_bytes) / kGiB / 105.0, 1.0, 0.02);
  EXPECT_EQ(p.model_bytes, 112420000000ULL);  // 8.03e9 x 14
  EXPECT_EQ(p.shard_bytes % kShardAlignBytes, 0U);
  EXPECT_GE(p.bytes(), p.model_bytes);
  EXPECT_LT(p.bytes() - p.model_bytes, 8 * kShardAlignBytes);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(p.writer_index(r), r);
}

TEST(ShardPlan, Llama70bOn64RanksIsMlperfs912GB) {
  const ShardPlan p = from_file("llama3-70b-mlperf-storage.yaml");
  EXPECT_EQ(p.writers, 64);
  EXPECT_TRUE(p.every_rank_writes);
  EXPECT_NEAR(static_cast<double>(p.model_bytes) / kGiB / 912.0, 1.0, 0.02);
  // 70.6e9 x 14 / 64 = 15,443,750,000 -> rounded up to 4 KiB: 15,443,750,912.
  EXPECT_EQ(p.shard_bytes, 15443750912ULL);
}

TEST(ShardPlan, Llama405bTp8Pp32Dp2OneReplicaWrites) {
  const ShardPlan p = from_file("llama3-405b-mlperf-storage.yaml");
  EXPECT_EQ(p.ranks, 512);
  EXPECT_EQ(p.writers, 256);  // tp 8 x pp 32
  EXPECT_FALSE(p.every_rank_writes);
  EXPECT_EQ(p.model_bytes, 5682600000000ULL);  // 405.9e9 x 14
  EXPECT_NEAR(static_cast<double>(p.shard_bytes), 5682600000000.0 / 256.0, 4096.0);
  // Replica dp 0 writes: ranks tp + 8 * (0 + 2 * pp); every writer index once.
  std::set<int> indexes;
  int writing = 0;
  for (int r = 0; r < 512; ++r) {
    const int dp_index = (r / 8) % 2;
    EXPECT_EQ(p.writes(r), dp_index == 0) << r;
    if (p.writes(r)) {
      ++writing;
      indexes.insert(p.writer_index(r));
    }
  }
  EXPECT_EQ(writing, 256);
  EXPECT_EQ(indexes.size(), 256U);
  EXPECT_EQ(*indexes.rbegin(), 255);
  EXPECT_EQ(p.writer_index(8), -1);  // tp 0, dp 1, pp 0
  EXPECT_EQ(p.writer_index(16), 8);  // tp 0, dp 0, pp 1 -> index 0 + 8 * 1
}

TEST(ShardPlan, BytesPerParameterFromTheFile) {
  model::Workload w = model::parse_workload(
      "model: {parameters: 1B, layers: 2, hidden: 64}\ndtype: bf16\nsequence_length: 16\nmicro_batch: 1\n"
      "parallel: {ranks: 4, ranks_per_node: 4, tp: 1, pp: 1, dp: 4}\nsharding: fsdp\n"
      "checkpoint: {bytes_per_parameter: 2}\n",
      "t.yaml");
  const ShardPlan p = plan_from_workload(w);
  EXPECT_EQ(p.model_bytes, 2000000000ULL);
  EXPECT_EQ(p.shard_bytes, 500002816ULL);  // 5e8 rounded up to 4 KiB
}

TEST(ShardPlan, WorkloadBadKeyNamesItsLine) {
  try {
    model::parse_workload(
        "model: {parameters: 1B, layers: 2, hidden: 64}\ndtype: bf16\nsequence_length: 16\nmicro_batch: 1\n"
        "parallel: {ranks: 4, ranks_per_node: 4, tp: 1, pp: 1, dp: 4}\ncheckpoint:\n  bytes_per_param: 2\n",
        "t.yaml");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("t.yaml:7: unknown key 'checkpoint.bytes_per_param'", 0), 0U) << e.what();
  }
}

TEST(ShardPlan, ShardBytesMustBeAligned) {
  EXPECT_THROW(plan_from_shard_bytes(1000, 2), UsageError);
  EXPECT_THROW(plan_from_shard_bytes(0, 2), UsageError);
  const ShardPlan p = plan_from_shard_bytes(1 << 20, 3);
  EXPECT_EQ(p.bytes(), 3ULL << 20);
  EXPECT_EQ(p.writers, 3);
}

// Issue 27 item 4: shard x ranks at most 2^62, so no product with a rank count wraps (2^63 x 2 was 0).
TEST(ShardPlan, ShardTimesRanksMustFit) {
  EXPECT_EQ(plan_from_shard_bytes(kMaxCheckpointBytes / 2, 2).bytes(), kMaxCheckpointBytes);
  EXPECT_THROW(plan_from_shard_bytes(kMaxCheckpointBytes / 2 + 4096, 2), UsageError);
  EXPECT_THROW(plan_from_shard_bytes(1ULL << 63, 2), UsageError);
  EXPECT_THROW(plan_from_shard_bytes(18446744073709547520ULL, 1), UsageError);
  // DDP on 8 ranks: one writer holds all 1e15 x 1024 bytes, and 8 x that is above 2^62.
  model::Workload w;
  w.source = "w.yaml";
  w.parameters = 1e15;
  w.checkpoint_bytes_per_parameter = 1024;
  w.ranks = 8;
  w.ranks_per_node = 8;
  w.dp = 8;
  try {
    (void)plan_from_workload(w);
    FAIL() << "a plan above 2^62 was accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--workload w.yaml: a shard of ", 0), 0u) << e.what();
  }
  w.dp = 1;
  w.ranks = 1;
  EXPECT_EQ(plan_from_workload(w).bytes(), 1024000000000000000ULL);
}

}  // namespace
}  // namespace ccbench::checkpoint
