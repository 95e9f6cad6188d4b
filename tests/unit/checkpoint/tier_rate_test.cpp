// Storage-tier rates at a job's scale for `ccbench model checkpoint`: FSx from its per-TiB table,
// capacity sizing by FSx's steps, S3's per-prefix request rates, the nodes' network cap and the
// tier grammar's messages (docs/model.md, "What checkpoints cost a job").
#include "checkpoint/tier_rate.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace {

using namespace ccbench::checkpoint;

TierQuery query(const std::string& tier, std::uint64_t bytes, int nodes, double node_gbps) {
  TierQuery q;
  q.tier = parse_tier(tier, "--config");
  q.checkpoint_bytes = bytes;
  q.writer_nodes = nodes;
  q.node_network_gbps = node_gbps;
  return q;
}

TEST(TierRate, CapacityStepsFromTheConfig) {
  EXPECT_DOUBLE_EQ(fsx_capacity_steps().smallest_tib, 1.2);
  EXPECT_DOUBLE_EQ(fsx_capacity_steps().step_tib, 2.4);
  EXPECT_DOUBLE_EQ(fsx_round_capacity_tib(0.1), 1.2);
  EXPECT_DOUBLE_EQ(fsx_round_capacity_tib(1.3), 2.4);
  EXPECT_NEAR(fsx_round_capacity_tib(65.9), 67.2, 1e-9);
  EXPECT_NEAR(fsx_round_capacity_tib(67.2), 67.2, 1e-9);
}

// PERSISTENT_2-250 x 9.6 TiB: 250 MB/s/TiB baseline = 2.4 GB/s, 500 with burst = 4.8 GB/s.
TEST(TierRate, FsxGivenCapacity) {
  const auto r = tier_rates(query("fsx:PERSISTENT_2-250:9.6", 1ULL << 40, 16, 400));
  EXPECT_NEAR(r.write.value_gbps, 2.4, 1e-9);
  EXPECT_NEAR(r.write.lo_gbps, 2.4, 1e-9);
  EXPECT_NEAR(r.write.hi_gbps, 4.8, 1e-9);
  EXPECT_DOUBLE_EQ(r.capacity_tib, 9.6);
  EXPECT_NE(r.limited_by.find("PERSISTENT_2-250"), std::string::npos);
}

// Sized for a 60 s write of 988.4e9 bytes at 250 MB/s/TiB: 988.4e9 / 60 / 250e6 = 65.9 TiB -> 67.2;
// at 1000 MB/s/TiB 16.5 -> 16.8 TiB. Space for keep = 2 (1.8 TiB) does not bind.
TEST(TierRate, FsxSizedForAWriteTarget) {
  auto q = query("fsx:PERSISTENT_2-250", 988400058368ULL, 2048, 400);
  q.write_within_s = 60;
  EXPECT_NEAR(tier_rates(q).capacity_tib, 67.2, 1e-9);
  q.tier = parse_tier("fsx:PERSISTENT_2-1000", "--config");
  EXPECT_NEAR(tier_rates(q).capacity_tib, 16.8, 1e-9);
  // Space binds when the rate needs little: 10 checkpoints of 1 TiB need 10 TiB -> 12 TiB.
  auto space = query("fsx:PERSISTENT_2-1000", 1ULL << 40, 8, 400);
  space.write_within_s = 3600;
  space.keep = 10;
  EXPECT_NEAR(tier_rates(space).capacity_tib, 12.0, 1e-9);
  q.write_within_s = 0;
  try {
    (void)tier_rates(q);
    FAIL() << "no capacity and no target";
  } catch (const ccbench::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--write-within"), std::string::npos) << e.what();
  }
}

// S3 with 64 MiB parts: 3500 PUT/s x 67108864 B = 234.9 GB/s a prefix; GET 5500 x 64 MiB = 369.1.
// Two nodes of 12.5 GB/s cap it at 25 GB/s.
TEST(TierRate, S3FromPrefixRatesAndNetwork) {
  EXPECT_DOUBLE_EQ(s3_limits().put_per_s_per_prefix, 3500);
  EXPECT_DOUBLE_EQ(s3_limits().get_per_s_per_prefix, 5500);
  auto r = tier_rates(query("s3:2", 1ULL << 40, 1000, 400));
  EXPECT_NEAR(r.write.value_gbps, 2 * 3500 * 67108864.0 / 1e9, 1e-6);
  EXPECT_NEAR(r.read.value_gbps, 2 * 5500 * 67108864.0 / 1e9, 1e-6);
  r = tier_rates(query("s3", 1ULL << 40, 2, 12.5));
  EXPECT_DOUBLE_EQ(r.write.value_gbps, 25);
  EXPECT_NE(r.limited_by.find("network"), std::string::npos) << r.limited_by;
}

TEST(TierRate, GrammarErrorsNameTheFlagAndPart) {
  const auto message = [](const std::string& t) {
    try {
      (void)parse_tier(t, "--config");
    } catch (const ccbench::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("lustre").find("--config: tier 'lustre': unknown tier"), std::string::npos);
  EXPECT_NE(message("fsx:PERSISTENT_2").find("expected DEPLOYMENT-PER_TIB"), std::string::npos);
  EXPECT_NE(message("fsx:PERSISTENT_2-300").find("--fsx-throughput-per-tib: 300 is not a tier"), std::string::npos);
  EXPECT_NE(message("fsx:PERSISTENT_2-250:-1").find("capacity '-1'"), std::string::npos);
  EXPECT_NE(message("fsx:PERSISTENT_2-250,s3").find("one spec tier only"), std::string::npos);
  EXPECT_NE(message("s3:0").find("PREFIXES"), std::string::npos);
  EXPECT_NE(message("measured:").find("expected measured:FILE"), std::string::npos);
}

// Measured: per node = each trial's aggregate / the file's nodes; value the median, band min..max
// (scaling and the spec cap: tests/unit/model/test_model_checkpoint.py on a real result file).
TEST(TierRate, MeasuredPerNodeFromTrials) {
  ccbench::ResultFile f;
  f.source = "m.json";
  f.system = {{"nodes", 2}};
  for (double g : {1.0, 2.0, 4.0}) {
    ccbench::ResultRow row;
    row.op = "checkpoint_write";
    row.bytes = 1000000000;
    row.time_us.median = 1e6 / g;  // the rate is recomputed from bytes and time, and busbw must agree
    row.busbw_gbps = g;
    f.results.push_back(row);
  }
  const auto m = measured_rate({f});
  EXPECT_DOUBLE_EQ(m.write_per_node.value_gbps, 1.0);
  EXPECT_DOUBLE_EQ(m.write_per_node.lo_gbps, 0.5);
  EXPECT_DOUBLE_EQ(m.write_per_node.hi_gbps, 2.0);
  EXPECT_FALSE(m.read_per_node.has_value());
  EXPECT_EQ(m.trials, 3);
  f.results.clear();
  EXPECT_THROW((void)measured_rate({f}), ccbench::ParseError);
}

// Issue 27 item 12: a file is refused when it contradicts itself or is not a durable measurement.
TEST(TierRate, MeasuredRefusesEditedNotDurableAndBadNodes) {
  ccbench::ResultFile f;
  f.source = "m.json";
  f.system = {{"nodes", 1}};
  ccbench::ResultRow row;
  row.op = "checkpoint_write";
  row.bytes = 1000000000;
  row.time_us.median = 1e6;
  row.busbw_gbps = 1.0;
  f.results = {row};
  EXPECT_DOUBLE_EQ(measured_rate({f}).write_per_node.value_gbps, 1.0);
  f.results[0].busbw_gbps = 100.0;  // edited x100
  EXPECT_THROW((void)measured_rate({f}), ccbench::ParseError);
  f.results[0].busbw_gbps = 1.0;
  f.results[0].extra["durable"] = false;  // --no-fsync
  EXPECT_THROW((void)measured_rate({f}), ccbench::ParseError);
  f.results[0].extra.erase("durable");
  f.system = {{"nodes", 2147483648LL}};
  EXPECT_THROW((void)measured_rate({f}), ccbench::ParseError);
  f.results[0].extra["plausibility"] = "not durable? above the tier";
  f.system = {{"nodes", 1}};
  EXPECT_EQ(measured_rate({f}).warnings.size(), 1u);
}

}  // namespace
