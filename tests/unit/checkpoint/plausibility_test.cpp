// The FSx limits from configs/storage/fsx-lustre.yaml (P2-250 x 9.6 TiB = 2.4 GB/s disk) and the
// "not durable?" warning.
#include "checkpoint/plausibility.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace ccbench::checkpoint {
namespace {

TEST(FsxLimits, Persistent2At250On9p6TiBIs2p4GBps) {
  const ThroughputLimit l = fsx_limit(fsx_table(), "PERSISTENT_2", 250, 9.6, Direction::write);
  EXPECT_NEAR(l.baseline_gbps, 2.4, 1e-12);  // min(network 640, disk 250) x 9.6 TiB
  EXPECT_NEAR(l.ceiling_gbps, 4.8, 1e-12);   // min(network burst 1300, disk burst 500) x 9.6
}

TEST(FsxLimits, NetworkBindsAtTheTopTierAndScratchWritesAt100) {
  const ThroughputLimit p1000 = fsx_limit(fsx_table(), "PERSISTENT_2", 1000, 2.4, Direction::write);
  EXPECT_NEAR(p1000.baseline_gbps, 2.4, 1e-12);  // disk 1000 < network 2600
  EXPECT_NEAR(p1000.ceiling_gbps, 2.4, 1e-12);   // no burst published
  const ThroughputLimit s2w = fsx_limit(fsx_table(), "SCRATCH_2", 200, 12.0, Direction::write);
  EXPECT_NEAR(s2w.baseline_gbps, 1.2, 1e-12);
  const ThroughputLimit s2r = fsx_limit(fsx_table(), "SCRATCH_2", 200, 12.0, Direction::read);
  EXPECT_NEAR(s2r.baseline_gbps, 2.4, 1e-12);
}

TEST(FsxLimits, UnknownTierNamesTheFlag) {
  try {
    fsx_limit(fsx_table(), "PERSISTENT_2", 300, 1, Direction::write);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--fsx-throughput-per-tib: 300 is not a tier of PERSISTENT_2 (one of 125, 250, 500, 1000)");
  }
}

TEST(FsxLimits, TableErrorsNameTheRowAndKey) {
  try {
    parse_fsx_table("tiers:\n  - {deployment: X, per_tib: 1, network_baseline: nan}\n", "f.yaml");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "f.yaml: tiers[0].network_baseline: expected a number >= 0");
  }
}

TEST(Plausibility, AboveTheCeilingOrMemoryIsNotDurable) {
  const ThroughputLimit l{0.05, 0.052, "--tier-gbps 0.052"};
  EXPECT_FALSE(plausibility_warning(0.05, l, 10.0));
  EXPECT_EQ(*plausibility_warning(1.5, l, 10.0),
            "not durable? 1.5 GB/s is above what the stated tier can carry (0.052 GB/s: --tier-gbps 0.052)");
  EXPECT_EQ(*plausibility_warning(12.0, std::nullopt, 10.0),
            "not durable? 12 GB/s is above the hosts' memory bandwidth (10 GB/s measured)");
  EXPECT_FALSE(plausibility_warning(12.0, std::nullopt, 0.0));
}

}  // namespace
}  // namespace ccbench::checkpoint
