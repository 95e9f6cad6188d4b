// The run session with LocalChannel and the fake backend: what it records (peak RSS, final
// metadata), what it refuses before measuring (exit 2 naming the flag), and that a refused run
// never touches an existing result file.
#include "sweep/session.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "core/result.hpp"
#include "fake_backend.hpp"
#include "sweep/channel.hpp"
#include "sweep/result_writer.hpp"

namespace ccbench {
namespace {

namespace fs = std::filesystem;
using testing::FakeBackend;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("ccbench_session_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  static inline int counter_ = 0;
};

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

RunConfig small_config(const fs::path& json) {
  RunConfig config = testing::two_size_allreduce_config(10);
  config.progress = "never";
  config.json_path = json.string();
  return config;
}

struct Outcome {
  int exit = -1;
  std::string out, err;
};

// Runs a session with the fake backend, capturing stdout and stderr.
Outcome run_session(const RunConfig& config, std::function<void(FakeBackend&)> setup = {},
                    double setup_floor_s = kSetupTimeoutFloorS) {
  LocalChannel channel;
  RunEnding ending("ccbench test", channel.rank());
  SessionHooks hooks;
  ending.set_setup_floor_s(setup_floor_s);
  hooks.make_backend = [setup](ControlChannel&) -> std::unique_ptr<Backend> {
    auto backend = std::make_unique<FakeBackend>();
    backend->final = {{"fake_counter", 7}};
    if (setup) setup(*backend);
    return backend;
  };
  hooks.describe = [](ControlChannel&, const Backend& backend, const Plan&) {
    ResultFile file;
    file.tool = {{"name", "ccbench"}};
    file.run.command = {"ccbench test"};
    file.software = backend.metadata();
    return file;
  };
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  Outcome o;
  o.exit = RunSession(channel, config, std::move(hooks), ending).run();
  o.out = ::testing::internal::GetCapturedStdout();
  o.err = ::testing::internal::GetCapturedStderr();
  return o;
}

TEST(RunSession, RecordsPeakMemoryAndFinalMetadata) {
  TempDir dir;
  const fs::path json = dir.path() / "r.json";
  const Outcome o = run_session(small_config(json));
  ASSERT_EQ(o.exit, 0) << o.err;
  const ResultFile file = load_result_file(json);
  EXPECT_EQ(file.run.status, "complete");
  EXPECT_EQ(file.run.exit_code, 0);
  EXPECT_EQ(file.results.size(), 2u);
  EXPECT_GT(file.run.peak_rss_bytes, 0u);
  EXPECT_EQ(file.software.value("fake_counter", 0), 7);
  EXPECT_EQ(file.software.value("fake_version", ""), "1.0");
  // One console reporter: the table's title, a row per size, the summary line.
  EXPECT_NE(o.out.find("# allreduce\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("# 2 results, 2 met the CI target (±1.0%), 0 wrong elements; peak memory "), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("# result file: " + json.string()), std::string::npos);
  // Where users read the interval, it says what it is not (issue: precision inside one launch).
  EXPECT_NE(o.out.find("# the ± CIs are precision inside this launch; across launches compare separate launches "
                       "(scripts/launches.sh)\n"),
            std::string::npos);
}

// A set-up that never returns (a backend's init waiting on a dead peer) ends in exit 3 within
// max(-T, the floor), naming the phase, instead of hanging the allocation.
TEST(RunSessionDeathTest, HangDuringSetUpIsExitThree) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TempDir dir;
  RunConfig config = small_config(dir.path() / "r.json");
  config.timeout_s = 0.5;
  // Not run_session(): it captures stderr, where the death test reads the message.
  auto hang_in_set_up = [&config] {
    LocalChannel channel;
    RunEnding ending("ccbench test", channel.rank());
    SessionHooks hooks;
    ending.set_setup_floor_s(0.0);
    hooks.make_backend = [](ControlChannel&) -> std::unique_ptr<Backend> {
      std::this_thread::sleep_for(std::chrono::seconds(30));
      return std::make_unique<FakeBackend>();
    };
    RunSession(channel, config, std::move(hooks), ending).run();
  };
  EXPECT_EXIT(hang_in_set_up(), ::testing::ExitedWithCode(3), "ccbench test: rank 0: .*before the first measurement");
  EXPECT_FALSE(fs::exists(dir.path() / "r.json"));
}

TEST(RunSession, WrongElementsExitOne) {
  TempDir dir;
  const fs::path json = dir.path() / "r.json";
  const Outcome o = run_session(small_config(json), [](FakeBackend& b) { b.wrong_per_case = 2; });
  EXPECT_EQ(o.exit, exit_code::data_check_failed);
  EXPECT_NE(o.err.find("ccbench test: data check failed: 4 wrong elements"), std::string::npos) << o.err;
  const ResultFile file = load_result_file(json);
  EXPECT_EQ(file.run.exit_code, 1);
  EXPECT_EQ(file.run.status, "complete");
}

TEST(RunSession, BuffersThatOverflowAreExitTwoNamingTheFlagAndTheOldFileSurvives) {
  TempDir dir;
  const fs::path json = dir.path() / "r.json";
  std::ofstream(json) << "good old results\n";
  RunConfig config = small_config(json);
  config.sizes = {1ULL << 63, 1ULL << 63, 2.0, 0};  // -b 8388608T -e 8388608T
  const Outcome o = run_session(config);
  EXPECT_EQ(o.exit, exit_code::usage);
  EXPECT_EQ(o.err,
            "ccbench test: -b/--min-bytes and -e/--max-bytes 8388608T: the buffers of the largest case exceed 2^64 "
            "bytes per rank\n");
  EXPECT_EQ(read(json), "good old results\n");
}

TEST(RunSession, BuffersOverTheBudgetAreExitTwo) {
  TempDir dir;
  RunConfig config = small_config(dir.path() / "r.json");
  const Outcome o = run_session(config, [](FakeBackend& b) { b.budget_bytes = 1024 * 1024; });
  EXPECT_EQ(o.exit, 0);  // 2 x 2 KiB fits in 1 MiB
  config.sizes = {4u << 20, 4u << 20, 2.0, 0};
  const Outcome big = run_session(config, [](FakeBackend& b) { b.budget_bytes = 1024 * 1024; });
  EXPECT_EQ(big.exit, exit_code::usage);
  EXPECT_EQ(big.err,
            "ccbench test: -b/--min-bytes and -e/--max-bytes 4M: the largest case needs 8.0 MiB of buffers per rank, "
            "but only 1.0 MiB is available per rank (1 ranks on this node)\n");
}

TEST(RunSession, OutputThatIsADirectoryIsExitTwo) {
  TempDir dir;
  const fs::path json = dir.path() / "r.json";
  fs::create_directories(json);
  Outcome o = run_session(small_config(json));
  EXPECT_EQ(o.exit, exit_code::usage);
  EXPECT_EQ(o.err, "ccbench test: -J/--json " + json.string() + ": is a directory\n");
}

TEST(RunSession, StreamPathThatIsADirectoryIsExitTwoAndTheOldFileSurvives) {
  TempDir dir;
  const fs::path json = dir.path() / "r.json";
  std::ofstream(json) << "good old results\n";
  fs::create_directories(dir.path() / "r.jsonl");
  const Outcome o = run_session(small_config(json));
  EXPECT_EQ(o.exit, exit_code::usage);
  EXPECT_EQ(o.err, "ccbench test: -J/--json " + json.string() + ": its result stream " +
                       (dir.path() / "r.jsonl").string() + " is a directory\n");
  EXPECT_EQ(read(json), "good old results\n");
}

TEST(RunSession, BackendFailureIsExitTwoWithItsMessage) {
  TempDir dir;
  LocalChannel channel;
  RunEnding ending("ccbench test", channel.rank());
  SessionHooks hooks;
  hooks.make_backend = [](ControlChannel&) -> std::unique_ptr<Backend> { throw UsageError("--backend fake: no"); };
  hooks.describe = [](ControlChannel&, const Backend&, const Plan&) { return ResultFile{}; };
  const RunConfig config = small_config(dir.path() / "r.json");
  ::testing::internal::CaptureStderr();
  const int exit = RunSession(channel, config, std::move(hooks), ending).run();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "ccbench test: --backend fake: no\n");
  EXPECT_EQ(exit, exit_code::usage);
  EXPECT_FALSE(fs::exists(dir.path() / "r.json"));
}

TEST(ResultWriter, WritesNothingBeforeTheFirstResult) {
  TempDir dir;
  const fs::path json = dir.path() / "r.json";
  std::ofstream(json) << "good old results\n";
  {
    ResultWriter writer(ResultFile{}, json);
    EXPECT_EQ(read(json), "good old results\n");
    // The stream exists from the start as the run's lock (flock, one run per -J), but holds nothing.
    EXPECT_FALSE(fs::exists(dir.path() / "r.jsonl") && fs::file_size(dir.path() / "r.jsonl") != 0);
    ::testing::internal::CaptureStderr();
    EXPECT_FALSE(writer.finish("interrupted", 143, std::string("signal")));
    EXPECT_EQ(::testing::internal::GetCapturedStderr(),
              "ccbench: no result finished; " + json.string() + " left as it was\n");
  }
  EXPECT_EQ(read(json), "good old results\n");
  ResultWriter writer(ResultFile{}, json);
  ResultRow row;
  row.op = "allreduce";
  row.bytes = 8;
  writer.append(row);
  EXPECT_NE(read(json).find("\"status\": \"incomplete\""), std::string::npos);
  EXPECT_TRUE(fs::exists(dir.path() / "r.jsonl"));
}

}  // namespace
}  // namespace ccbench
