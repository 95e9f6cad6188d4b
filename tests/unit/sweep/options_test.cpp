// `ccbench run`'s option parser and the flags the measuring commands share (no MPI, no launcher).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/run_options.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
#include "sweep/session_flags.hpp"

namespace ccbench {
namespace {

RunConfig parse(std::vector<std::string> args) {
  args.insert(args.begin(), "ccbench run");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  RunConfig config;
  EXPECT_TRUE(cli::parse_run_options(static_cast<int>(args.size()), argv.data(), config, false));
  return config;
}

std::string usage_error(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RunOptions, Defaults) {
  const RunConfig c = parse({});
  EXPECT_EQ(c.backend, "mpi");
  EXPECT_EQ(c.ops, (std::vector<Op>{Op::allreduce, Op::allgather, Op::alltoall}));
  EXPECT_EQ(c.sizes.min_bytes, 8u);
  EXPECT_EQ(c.sizes.max_bytes, 64u << 20);
  EXPECT_DOUBLE_EQ(c.sizes.step_factor, 2.0);
  EXPECT_FALSE(c.iters.has_value());
  EXPECT_DOUBLE_EQ(c.target_ci, 0.01);
  EXPECT_DOUBLE_EQ(c.timeout_s, 300);
  EXPECT_TRUE(c.check);
  EXPECT_EQ(c.in_place, InPlaceMode::both);
}

TEST(RunOptions, SharedFlagsParse) {
  const RunConfig c =
      parse({"-b", "1K", "-e", "1M",       "-f", "4",  "-n",       "25",      "--target-ci", "2%",          "-T",
             "0",  "-c", "0",  "--trials", "3",  "-J", "out.json", "--label", "x",           "--link-gbps", "100"});
  EXPECT_EQ(c.sizes.min_bytes, 1024u);
  EXPECT_EQ(c.sizes.max_bytes, 1u << 20);
  EXPECT_DOUBLE_EQ(c.sizes.step_factor, 4.0);
  EXPECT_EQ(c.iters, 25);
  EXPECT_DOUBLE_EQ(c.target_ci, 0.02);
  EXPECT_DOUBLE_EQ(c.timeout_s, 0);
  EXPECT_FALSE(c.check);
  EXPECT_EQ(c.trials, 3);
  EXPECT_EQ(c.json_path, "out.json");
  EXPECT_DOUBLE_EQ(c.link_gbps, 100);
}

TEST(RunOptions, TimeoutMustBeAFiniteNumberInRange) {
  EXPECT_EQ(usage_error({"-T", "nan"}), "-T/--timeout: 'nan' is not a finite number");
  EXPECT_EQ(usage_error({"-T", "inf"}), "-T/--timeout: 'inf' is not a finite number");
  EXPECT_EQ(usage_error({"-T", "1e999"}), "-T/--timeout: '1e999' is not a finite number");
  EXPECT_EQ(usage_error({"-T", "9.3e9"}),
            "-T/--timeout: 9.3e9 is out of range (0 = no watchdog, up to 1000000 seconds)");
  EXPECT_EQ(usage_error({"-T", "-1"}), "-T/--timeout: -1 is out of range (0 = no watchdog, up to 1000000 seconds)");
  EXPECT_EQ(usage_error({"-T", "5s"}), "-T/--timeout: '5s' is not a finite number");
  EXPECT_DOUBLE_EQ(parse({"-T", "1e6"}).timeout_s, kMaxTimeoutS);
}

TEST(RunOptions, OtherNumbersMustBeFinite) {
  EXPECT_EQ(usage_error({"--link-gbps", "nan"}), "--link-gbps: 'nan' is not a finite number");
  EXPECT_EQ(usage_error({"--link-gbps", "inf"}), "--link-gbps: 'inf' is not a finite number");
  EXPECT_EQ(usage_error({"-f", "nan"}), "-f/--step-factor: 'nan' is not a finite number");
  EXPECT_EQ(usage_error({"--target-ci", "nan"}), "--target-ci: 'nan' is not a fraction (write 1% or 0.01)");
  EXPECT_EQ(usage_error({"--max-time-per-size", "inf"}), "--max-time-per-size: 'inf' is not a finite number");
}

TEST(RunOptions, HugeSizesParseAndAreLeftToTheMemoryCheck) {
  const RunConfig c = parse({"-b", "8388608T", "-e", "8388608T"});
  EXPECT_EQ(c.sizes.min_bytes, 1ULL << 63);
  EXPECT_EQ(usage_error({"-b", "16777216T"}), "-b/--min-bytes: size '16777216T' is too large");
}

TEST(RunOptions, BadValuesNameTheFlag) {
  EXPECT_EQ(usage_error({"-n", "0"}), "-n/--iters: '0' is not a positive count or 'auto'");
  EXPECT_EQ(usage_error({"-c", "2"}), "-c/--check: expected 0 or 1, got '2'");
  EXPECT_EQ(usage_error({"--progress", "loud"}), "--progress: expected auto, always or never, got 'loud'");
  EXPECT_EQ(usage_error({"-f", "1", "-b", "8", "-e", "16"}), "-f/--step-factor must be greater than 1 (got 1)");
}

TEST(RunOptions, ConfigFileAndFlagsWin) {
  const auto path = std::filesystem::temp_directory_path() / "ccbench_options_test.yaml";
  std::ofstream(path) << "max_bytes: 4K\niters: 7\ntimeout: 60\n";
  const RunConfig c = parse({"--config", path.string(), "-n", "9"});
  EXPECT_EQ(c.sizes.max_bytes, 4096u);
  EXPECT_EQ(c.iters, 9);
  EXPECT_DOUBLE_EQ(c.timeout_s, 60);
  std::ofstream(path) << "timeout: .nan\n";
  EXPECT_EQ(usage_error({"--config", path.string()}), "-T/--timeout: '.nan' is not a finite number");
  std::filesystem::remove(path);
}

// The shared flags use core/numbers' parser (one parser of numbers for every command).
TEST(SharedFlags, ParseFiniteRejectsTrailingText) {
  EXPECT_DOUBLE_EQ(parse_finite("2.5", "--x"), 2.5);
  EXPECT_THROW(parse_finite("", "--x"), UsageError);
  EXPECT_THROW(parse_finite("2.5 s", "--x"), UsageError);
  EXPECT_THROW(parse_finite("-inf", "--x"), UsageError);
}

}  // namespace
}  // namespace ccbench
