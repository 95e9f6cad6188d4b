#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/fabric_options.hpp"
#include "core/bandwidth.hpp"
#include "core/error.hpp"
#include "fabric/fabric_options.hpp"

namespace ccbench::fabric {
namespace {

bool parse(std::vector<std::string> args, FabricConfig& config) {
  args.insert(args.begin(), "ccbench fabric");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return cli::parse_fabric_options(static_cast<int>(argv.size()), argv.data(), config, false);
}

TEST(FabricOptions, DefaultsArePingpongAndBwOverUint8) {
  FabricConfig c;
  ASSERT_TRUE(parse({}, c));
  EXPECT_EQ(c.run.ops, (std::vector<Op>{Op::fabric_pingpong, Op::fabric_bw}));
  EXPECT_EQ(c.run.backend, "libfabric");
  EXPECT_EQ(c.run.dtype, DType::uint8);
  EXPECT_EQ(c.run.in_place, InPlaceMode::no);
  EXPECT_EQ(c.window, 64);
  EXPECT_EQ(c.memory, MemoryKind::host);
  EXPECT_FALSE(c.run.iters.has_value());  // -n auto
  EXPECT_TRUE(c.run.check);
  EXPECT_TRUE(c.provider.empty());
}

TEST(FabricOptions, SweepFlagsMeanWhatTheyMeanForRun) {
  FabricConfig c;
  ASSERT_TRUE(parse({"--ops",
                     "pingpong,bw,bibw,write,read",
                     "-p",
                     "tcp",
                     "-b",
                     "8",
                     "-e",
                     "1M",
                     "-n",
                     "20",
                     "-w",
                     "2",
                     "--trials",
                     "3",
                     "-c",
                     "0",
                     "-T",
                     "9",
                     "--window",
                     "16",
                     "--max-time-per-size",
                     "0.5",
                     "--target-ci",
                     "2%"},
                    c));
  EXPECT_EQ(c.run.ops.size(), 5u);
  EXPECT_EQ(c.run.ops.back(), Op::fabric_read);
  EXPECT_EQ(c.provider, "tcp");
  EXPECT_EQ(c.run.sizes.max_bytes, 1u << 20);
  EXPECT_EQ(c.run.iters.value(), 20);
  EXPECT_EQ(c.run.warmup, 2);
  EXPECT_EQ(c.run.trials, 3);
  EXPECT_FALSE(c.run.check);
  EXPECT_DOUBLE_EQ(c.run.timeout_s, 9.0);
  EXPECT_EQ(c.window, 16);
  EXPECT_DOUBLE_EQ(c.run.target_ci, 0.02);
}

TEST(FabricOptions, FullOpNamesAndDuplicatesAreAccepted) {
  EXPECT_EQ(parse_fabric_ops("fabric_bibw,bibw,read"), (std::vector<Op>{Op::fabric_bibw, Op::fabric_read}));
}

TEST(FabricOptions, BadValuesAreUsageErrors) {
  FabricConfig c;
  EXPECT_THROW(parse({"--ops", "allreduce"}, c), UsageError);
  EXPECT_THROW(parse({"--ops", "pong"}, c), UsageError);
  EXPECT_THROW(parse({"--window", "0"}, c), UsageError);
  EXPECT_THROW(parse({"--memory", "rocm"}, c), UsageError);
  EXPECT_THROW(parse({"-n", "zero"}, c), UsageError);
  EXPECT_THROW(parse({"-c", "2"}, c), UsageError);
  EXPECT_THROW(parse({"-b", "0"}, c), UsageError);
  EXPECT_THROW(parse({"--no-such-flag"}, c), UsageError);
}

TEST(FabricOptions, ProviderListNeedsNoOtherFlag) {
  std::string a0 = "ccbench fabric", a1 = "--list-providers";
  char* argv[] = {a0.data(), a1.data()};
  EXPECT_TRUE(wants_provider_list(2, argv));
  EXPECT_FALSE(wants_provider_list(1, argv));
}

TEST(FabricBandwidth, BibwBusBandwidthCountsBothDirections) {
  EXPECT_DOUBLE_EQ(bus_factor(Op::fabric_bibw, 2), 2.0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::fabric_bw, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::fabric_pingpong, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_gbps(Op::fabric_bibw, 2, 1000, 1.0), 2.0);
}

}  // namespace
}  // namespace ccbench::fabric
