// The one ending ladder (sweep/run_ending.hpp) through the measuring frame, with ranks as threads:
// which exit code each rung gives every rank, and that rank 0's finished rows are kept with the
// status the rung names.
#include "measure/frame.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>

#include "core/error.hpp"
#include "rank_threads.hpp"
#include "sweep/result_writer.hpp"

namespace ccbench {
namespace {

namespace fs = std::filesystem;
using testing::run_ranks;
using testing::TempDir;

ResultRow row_of(std::uint64_t bytes) {
  ResultRow row;
  row.op = "allreduce";
  row.bytes = bytes;
  return row;
}

// The file as written (raw JSON: the rows here carry only what the ladder must keep).
nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

ResultFile header() {
  ResultFile file;
  file.tool = {{"name", "ccbench"}};
  file.run.command = {"ccbench test"};
  return file;
}

// Every rank: rank 0 writes `rows` rows, a barrier, then `failing` throws and the others wait on it.
std::vector<int> fail_on(int failing, const fs::path& json, int rows) {
  return run_ranks(3, [&](measure::Frame& frame) {
    std::unique_ptr<ResultWriter> writer;
    if (frame.is_root()) {
      writer = std::make_unique<ResultWriter>(header(), json);
      frame.ending().add_writer(writer.get());
    }
    return frame.ending().guard(
        [&] {
          for (int i = 0; i < rows && writer; ++i) writer->append(row_of(8u << i));
          frame.channel().barrier();
          if (frame.channel().rank() == failing) throw std::runtime_error("disk on fire");
          frame.channel().barrier();
          return exit_code::ok;
        },
        [] { return std::string("trial 0"); });
  });
}

TEST(Frame, AnErrorOnOneRankIsExitTwoThereAndAFailedPeerEverywhereElse) {
  TempDir dir("ccbench_frame_test");
  const fs::path json = dir.path() / "r.json";
  ::testing::internal::CaptureStderr();
  const std::vector<int> codes = fail_on(1, json, 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(codes, (std::vector<int>{exit_code::peer_failed, exit_code::usage, exit_code::peer_failed})) << err;
  EXPECT_NE(err.find("ccbench test: rank 1: disk on fire during trial 0\n"), std::string::npos) << err;
  const nlohmann::json file = read_json(json);
  EXPECT_EQ(file["run"]["status"], "incomplete");
  EXPECT_EQ(file["run"]["exit_code"], exit_code::peer_failed);
  EXPECT_EQ(file["run"]["error"], "peer failed: a rank of the thread world failed");
  ASSERT_EQ(file["results"].size(), 2u);  // the finished rows are kept
  EXPECT_EQ(file["results"][1]["bytes"], 16u);
  EXPECT_NE(err.find("ccbench test: 2 finished results kept in " + json.string() + " (status incomplete)\n"),
            std::string::npos)
      << err;
}

TEST(Frame, AnErrorOnRankZeroFinishesItsFileAsFailedWithTheRowsKept) {
  TempDir dir("ccbench_frame_test");
  const fs::path json = dir.path() / "r.json";
  ::testing::internal::CaptureStderr();
  const std::vector<int> codes = fail_on(0, json, 3);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(codes, (std::vector<int>{exit_code::usage, exit_code::peer_failed, exit_code::peer_failed})) << err;
  const nlohmann::json file = read_json(json);
  EXPECT_EQ(file["run"]["status"], "failed");
  EXPECT_EQ(file["run"]["exit_code"], exit_code::usage);
  EXPECT_EQ(file["run"]["error"], "disk on fire");
  EXPECT_EQ(file["results"].size(), 3u);
}

TEST(Frame, ABodyThatEndsNormallyKeepsItsCodeAndTheLadderTouchesNothing) {
  TempDir dir("ccbench_frame_test");
  const fs::path json = dir.path() / "r.json";
  const std::vector<int> codes = run_ranks(2, [&](measure::Frame& frame) {
    return frame.ending().guard([&] { return frame.channel().broadcast(frame.is_root() ? 1 : 0); },
                                [] { return std::string("nothing"); });
  });
  EXPECT_EQ(codes, (std::vector<int>{exit_code::data_check_failed, exit_code::data_check_failed}));
  EXPECT_FALSE(fs::exists(json));
}

// The watchdog's rungs, called as its handler calls them: a hang is exit 3 "incomplete", a signal
// 128+signal "interrupted"; the last step (congestion's summary) runs after the writers are
// finished, on the rung's status.
struct Rung {
  Rung(int exit_code, int signal, std::string message, std::string end_status)
      : event{exit_code, signal, std::move(message)}, status(std::move(end_status)) {}
  Watchdog::Event event;
  std::string status;
};

// How a rung shows in the test's name and messages (not its bytes, which hold addresses).
void PrintTo(const Rung& rung, std::ostream* out) { *out << rung.status << " exit " << rung.event.exit_code; }

class FrameRungs : public ::testing::TestWithParam<Rung> {};

TEST_P(FrameRungs, SaveTheRowsWithTheRungsStatusThenRunTheLastStep) {
  const Rung& rung = GetParam();
  TempDir dir("ccbench_frame_test");
  const fs::path json = dir.path() / "r.json";
  std::string status_at_last_step;
  int code_at_last_step = -1;
  ::testing::internal::CaptureStderr();
  const std::vector<int> codes = run_ranks(1, [&](measure::Frame& frame) -> int {
    ResultWriter writer(header(), json);
    writer.append(row_of(8));
    frame.ending().add_writer(&writer);
    frame.ending().set_last_step([&](EndStatus status, int code, const std::string&) {
      status_at_last_step = std::string(name(status));
      code_at_last_step = code;
      EXPECT_EQ(read_json(json)["run"]["status"], rung.status);  // the file was saved first
    });
    frame.ending().end(rung.event);
  });
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(codes, std::vector<int>{rung.event.exit_code});
  EXPECT_EQ(status_at_last_step, rung.status);
  EXPECT_EQ(code_at_last_step, rung.event.exit_code);
  const nlohmann::json file = read_json(json);
  EXPECT_EQ(file["run"]["status"], rung.status);
  EXPECT_EQ(file["run"]["exit_code"], rung.event.exit_code);
  EXPECT_EQ(file["results"].size(), 1u);
  EXPECT_NE(err.find("ccbench test: rank 0: " + rung.event.message), std::string::npos) << err;
}

std::string rung_name(const ::testing::TestParamInfo<Rung>& rung_info) {
  return rung_info.param.status + "_exit" + std::to_string(rung_info.param.event.exit_code);
}

INSTANTIATE_TEST_SUITE_P(Ladder, FrameRungs,
                         ::testing::Values(Rung(exit_code::timeout, 0, "no progress for 1 s in allreduce (sample)",
                                                "incomplete"),
                                           Rung(128 + SIGINT, SIGINT, "interrupted by SIGINT", "interrupted"),
                                           Rung(128 + SIGTERM, SIGTERM, "interrupted by SIGTERM", "interrupted")),
                         rung_name);

TEST(Frame, UsageErrorsAreAgreedAndPrintedOnceByRankZero) {
  ::testing::internal::CaptureStderr();
  const std::vector<int> codes = run_ranks(3, [](measure::Frame& frame) {
    const std::string mine = frame.channel().rank() == 2 ? "--target /x: not a directory" : "";
    return frame.agree_or_usage_error(mine).value_or(exit_code::ok);
  });
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "ccbench test: rank 2: --target /x: not a directory\n");
  EXPECT_EQ(codes, (std::vector<int>{exit_code::usage, exit_code::usage, exit_code::usage}));
}

}  // namespace
}  // namespace ccbench
