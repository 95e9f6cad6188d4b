// `ccbench congestion`'s phase loop (congestion_run/run.hpp) over ThreadChannel: four ranks as
// threads on two "hosts" (ranks 0-1 measured, 2-3 the remote congestors running alltoall), a fake
// backend, one trial (isolated phase, then congested). A rank that fails mid-phase ends every rank
// with the agreed codes, and rank 0's finished phase keeps its rows, the summary saying how it ended.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "../sweep/fake_backend.hpp"
#include "congestion/layout.hpp"
#include "congestion_run/run.hpp"
#include "core/error.hpp"
#include "core/result.hpp"
#include "rank_threads.hpp"

namespace ccbench {
namespace {

namespace fs = std::filesystem;
using congestion::Layout;
using congestion_run::CongestionOptions;
using testing::FakeBackend;
using testing::run_ranks;
using testing::TempDir;

// Samples per measured test; the measured set runs 3 tests a phase (allreduce 8 B and 1 MiB,
// alltoall 1 MiB), each `kIters` timed batches of one op: 9 timed batches a phase on each measured rank.
constexpr int kIters = 3;
constexpr int kBatchesPerPhase = 3 * kIters;

class SilentPrinter final : public congestion_run::Printer {
 public:
  void start(const Layout&, int, std::uint64_t) override {}
  void phase(const congestion_run::PhaseLine&) override { ++phases; }
  void table(const std::vector<congestion::ImpactRow>&) override {}
  void gate_and_method(const std::optional<congestion::GateResult>&, double, int) override {}
  void files(const fs::path&, const fs::path&, const fs::path&) override {}
  void data_check_failed(std::uint64_t) override {}
  void flush() override {}
  int phases = 0;
};

struct CongestionRun {
  std::vector<int> codes;
  int phases_printed = 0;
  std::string err;
};

// Runs the loop; the measured backend of `failing_rank` throws on its timed batch `fail_at`.
CongestionRun run_congestion_threads(const fs::path& json, int failing_rank = -1, int fail_at = 0) {
  RunConfig config;
  config.warmup = 0;
  config.batch = 1;
  config.iters = kIters;
  config.timeout_s = 0;
  config.trials = 1;
  config.in_place = InPlaceMode::no;
  config.json_path = json.string();
  CongestionOptions opt;
  opt.layout.measured_hosts = 1;
  opt.layout.patterns = {congestion::Pattern::alltoall};
  const Layout layout = congestion::make_layout({0, 0, 1, 1}, opt.layout);

  CongestionRun out;
  SilentPrinter printer;
  const congestion_run::MakeBackend make = [&](std::string_view, const BackendOptions& options) {
    auto backend = std::make_unique<FakeBackend>();
    if (options.group_color == congestion::kMeasuredColor && options.channel->rank() == failing_rank) {
      FakeBackend* b = backend.get();
      // time_batch_us counts the batch before it asks for the time: batch fail_at + 1 throws.
      b->op_time_us = [b, fail_at](const CaseSpec&) {
        if (b->timed_batches > fail_at) throw std::runtime_error("GPU fell off the bus");
        return 10.0;
      };
    }
    return backend;
  };
  opt.command = {"ccbench congestion"};
  ::testing::internal::CaptureStderr();
  out.codes = run_ranks(
      4,
      [&](measure::Frame& frame) {
        return congestion_run::run_congestion(frame.channel(), frame.ending(), config, opt, layout, printer,
                                              make);
      },
      "ccbench congestion");
  out.err = ::testing::internal::GetCapturedStderr();
  out.phases_printed = printer.phases;
  return out;
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(CongestionRun, EveryPhaseWritesItsFileAndTheSummaryOverThreadRanks) {
  TempDir dir("ccbench_congestion_run_test");
  const CongestionRun run = run_congestion_threads(dir.path() / "c.json");
  EXPECT_EQ(run.codes, (std::vector<int>{0, 0, 0, 0})) << run.err;
  EXPECT_EQ(run.phases_printed, 2);
  for (const char* phase : {"isolated", "congested"}) {
    const ResultFile file = load_result_file(dir.path() / (std::string("c.alltoall.") + phase + ".json"));
    EXPECT_EQ(file.run.status, "complete") << phase;
    EXPECT_EQ(file.results.size(), 3u) << phase;
  }
  const nlohmann::json summary = read_json(dir.path() / "c.impact.json");
  EXPECT_EQ(summary["status"], "complete");
  EXPECT_EQ(summary["exit_code"], 0);
  EXPECT_EQ(summary["phases"].size(), 2u);
}

// A measured rank other than 0 fails in the congested phase (its first timed batch there): it ends
// with exit 2, every other rank sees a failed peer (exit 4), rank 0's isolated file keeps its 3
// rows, the congested one (no row yet) says the same, and the summary says how the run ended.
TEST(CongestionRun, ARankFailingMidPhaseEndsEveryRankAndKeepsTheFinishedPhase) {
  TempDir dir("ccbench_congestion_run_test");
  const CongestionRun run = run_congestion_threads(dir.path() / "c.json", 1, kBatchesPerPhase);
  EXPECT_EQ(run.codes, (std::vector<int>{exit_code::peer_failed, exit_code::usage, exit_code::peer_failed,
                                         exit_code::peer_failed}))
      << run.err;
  EXPECT_NE(run.err.find("ccbench congestion: rank 1: GPU fell off the bus during "), std::string::npos) << run.err;
  const ResultFile isolated = load_result_file(dir.path() / "c.alltoall.isolated.json");
  EXPECT_EQ(isolated.run.status, "incomplete");
  EXPECT_EQ(isolated.run.exit_code, exit_code::peer_failed);
  EXPECT_EQ(isolated.results.size(), 3u);
  const nlohmann::json congested = read_json(dir.path() / "c.alltoall.congested.json");
  EXPECT_EQ(congested["run"]["status"], "incomplete");  // every phase file says how the run ended
  EXPECT_EQ(congested["results"].size(), 0u);
  const nlohmann::json summary = read_json(dir.path() / "c.impact.json");
  EXPECT_EQ(summary["status"], "incomplete");
  EXPECT_EQ(summary["exit_code"], exit_code::peer_failed);
  EXPECT_EQ(summary["phases"].size(), 1u);  // the isolated phase finished
}

// Rank 0 itself fails mid-phase (the general catch): its files are finished as failed with the
// error, the finished rows kept, and the summary written. (Congestion's own catch used to end the
// process without finishing any file: the isolated file stayed "incomplete" with no exit code and
// no summary was written.)
TEST(CongestionRun, AnErrorOnRankZeroFinishesEveryFileAsFailed) {
  TempDir dir("ccbench_congestion_run_test");
  const CongestionRun run = run_congestion_threads(dir.path() / "c.json", 0, kBatchesPerPhase);
  EXPECT_EQ(run.codes, (std::vector<int>{exit_code::usage, exit_code::peer_failed, exit_code::peer_failed,
                                         exit_code::peer_failed}))
      << run.err;
  const ResultFile isolated = load_result_file(dir.path() / "c.alltoall.isolated.json");
  EXPECT_EQ(isolated.run.status, "failed");
  EXPECT_EQ(isolated.run.exit_code, exit_code::usage);
  EXPECT_EQ(isolated.run.error.value_or(""), "GPU fell off the bus");
  EXPECT_EQ(isolated.results.size(), 3u);
  const nlohmann::json congested = read_json(dir.path() / "c.alltoall.congested.json");
  EXPECT_EQ(congested["run"]["status"], "failed");
  EXPECT_EQ(congested["results"].size(), 0u);
  const nlohmann::json summary = read_json(dir.path() / "c.impact.json");
  EXPECT_EQ(summary["status"], "failed");
  EXPECT_EQ(summary["exit_code"], exit_code::usage);
}

// A set-up that never returns (a congestor's backend init waiting on a dead peer) ends the
// process in exit 3 within max(-T, the floor), naming where (the death test's child runs it).
TEST(CongestionRunDeathTest, HangDuringSetUpIsExitThree) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto hang_in_set_up = [] {
    TempDir dir("ccbench_congestion_run_test");
    const fs::path json = dir.path() / "c.json";
    RunConfig config;
    config.timeout_s = 0.5;
    config.json_path = json.string();
    CongestionOptions opt;
    opt.layout.measured_hosts = 1;
    opt.layout.patterns = {congestion::Pattern::alltoall};
    const Layout layout = congestion::make_layout({0, 0, 1, 1}, opt.layout);
    SilentPrinter printer;
    const congestion_run::MakeBackend make = [](std::string_view, const BackendOptions& options) {
      if (options.channel->rank() == 2) std::this_thread::sleep_for(std::chrono::seconds(30));
      return std::unique_ptr<Backend>(std::make_unique<FakeBackend>());
    };
    run_ranks(
        4,
        [&](measure::Frame& frame) {
          frame.ending().set_setup_floor_s(0.0);
          return congestion_run::run_congestion(frame.channel(), frame.ending(), config, opt, layout, printer,
                                                make);
        },
        "ccbench congestion");
  };
  EXPECT_EXIT(hang_in_set_up(), ::testing::ExitedWithCode(exit_code::timeout),
              "ccbench congestion: rank [0-3]: .*before the first measurement");
}

}  // namespace
}  // namespace ccbench
