// The engine over LocalChannel and a fake backend: the curve it reports is exactly the times the
// backend returns, with algbw and busbw computed by hand, and -n auto stops where the stopping
// rule's arithmetic says.
#include "sweep/engine.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/sampling.hpp"
#include "fake_backend.hpp"
#include "sweep/channel.hpp"
#include "sweep/plan.hpp"
#include "sweep/watchdog.hpp"

namespace ccbench {
namespace {

using testing::FakeBackend;

class Recorder final : public SweepObserver {
 public:
  std::vector<std::string> events;
  std::vector<ResultRow> rows;
  void on_op_begin(int trial, Op op) override {
    events.push_back("op " + std::string(name(op)) + " " + std::to_string(trial));
  }
  void on_result(const ResultRow& row) override {
    events.push_back("result " + std::to_string(row.bytes) + (row.in_place ? " in" : " out"));
    rows.push_back(row);
  }
  void on_size_done(int, Op, std::span<const ResultRow> rows_done) override {
    events.push_back("size " + std::to_string(rows_done.size()));
  }
};

RunConfig quiet_config() {
  RunConfig config;
  config.ops = {Op::allreduce};
  config.sizes = {1024, 8192, 2.0, 0};  // 1K, 2K, 4K, 8K
  config.in_place = InPlaceMode::no;
  config.warmup = 0;
  config.batch = 1;  // no timing probe: every timed batch is a sample
  config.iters = 12;
  config.timeout_s = 0;  // no watchdog deadline
  return config;
}

struct SweepRun {
  std::vector<ResultRow> rows;
  SweepTotals totals;
  Recorder recorder;
};

SweepRun run_engine(const RunConfig& config, FakeBackend& backend, int plan_ranks) {
  LocalChannel channel;
  const Plan plan = make_plan(config, backend, plan_ranks, 0);
  Watchdog watchdog(0, [](const Watchdog::Event&) {});
  SweepRun run;
  run.totals = Engine(config, plan, backend, channel, watchdog, run.recorder).run();
  run.rows = run.recorder.rows;
  return run;
}

TEST(Engine, ReportsExactlyTheCurveTheBackendGives) {
  // 10 us per op below 4 KiB, twice that from 4 KiB on.
  FakeBackend backend;
  backend.op_time_us = [](const CaseSpec& c) { return c.layout.bytes < 4096 ? 10.0 : 20.0; };
  // The plan is for 8 ranks (busbw = algbw * 2 * 7/8 for allreduce); the channel is one rank.
  const SweepRun run = run_engine(quiet_config(), backend, 8);
  ASSERT_EQ(run.rows.size(), 4u);
  const double expected_time[] = {10, 10, 20, 20};
  // algbw = bytes / time = bytes / (t * 1e-6 s) / 1e9 = bytes / t / 1000 GB/s.
  const double expected_algbw[] = {0.1024, 0.2048, 0.2048, 0.4096};
  for (std::size_t i = 0; i < 4; ++i) {
    const ResultRow& row = run.rows[i];
    EXPECT_EQ(row.bytes, 1024u << i);
    EXPECT_EQ(row.samples_us.size(), 12u);
    EXPECT_DOUBLE_EQ(row.time_us.median, expected_time[i]);
    EXPECT_DOUBLE_EQ(row.time_us.min, expected_time[i]);
    EXPECT_DOUBLE_EQ(row.time_us.max, expected_time[i]);
    EXPECT_DOUBLE_EQ(row.algbw_gbps, expected_algbw[i]);
    EXPECT_DOUBLE_EQ(row.busbw_gbps, expected_algbw[i] * 1.75);
    EXPECT_EQ(row.batch, 1);
    EXPECT_EQ(row.ranks, 8);
    EXPECT_TRUE(row.ci_target_met);  // 12 identical samples: a CI of width 0
    EXPECT_EQ(row.backend, "fake");
  }
  EXPECT_EQ(run.totals.results, 4u);
  EXPECT_EQ(run.totals.ci_met, 4u);
  EXPECT_EQ(run.totals.wrong, 0u);
  EXPECT_EQ(backend.timed_batches, 4 * 12);
  // One fill and one checked launch per size (no warm-up).
  EXPECT_EQ(backend.fills, 4);
  EXPECT_EQ(backend.launches, 4);
}

TEST(Engine, ObserverSeesOpsResultsAndSizesInOrder) {
  FakeBackend backend;
  RunConfig config = quiet_config();
  config.sizes = {1024, 2048, 2.0, 0};
  config.in_place = InPlaceMode::both;
  config.trials = 2;
  const SweepRun run = run_engine(config, backend, 2);
  const std::vector<std::string> expected = {
      "op allreduce 0", "result 1024 out", "result 1024 in", "size 2", "result 2048 out", "result 2048 in", "size 2",
      "op allreduce 1", "result 1024 out", "result 1024 in", "size 2", "result 2048 out", "result 2048 in", "size 2"};
  EXPECT_EQ(run.recorder.events, expected);
  EXPECT_EQ(run.rows[4].trial, 1);
}

TEST(Engine, AutoStopsWhereTheOrderStatisticsSay) {
  // -n auto, 1% target: four slow samples (200 us) first, then 100 us. The first round is
  // kMinSamplesPerSize = 10 samples; for n = 10 the 95% CI of the median is [X(1), X(8)] (zero-based:
  // P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024), and X(8) = 200: CI half-width 100%.
  // The next round is max(n/2, 10) = 10 samples; for n = 20 the CI is [X(5), X(14)]
  // (P(B <= 5) = 21700/2^20 = 0.0207 <= 0.025 < P(B <= 6) = 0.0577), both 100: met, stop at 20.
  FakeBackend backend;
  backend.script_us = {200, 200, 200, 200};
  backend.op_time_us = [](const CaseSpec&) { return 100.0; };
  RunConfig config = quiet_config();
  config.sizes = {1024, 1024, 2.0, 0};
  config.iters.reset();
  config.target_ci = 0.01;
  config.max_time_per_size_s = 1000;  // time never decides here
  const SweepRun run = run_engine(config, backend, 2);
  ASSERT_EQ(run.rows.size(), 1u);
  EXPECT_EQ(run.rows[0].samples_us.size(), 20u);
  EXPECT_TRUE(run.rows[0].ci_target_met);
  EXPECT_DOUBLE_EQ(run.rows[0].time_us.median, 100.0);
  EXPECT_DOUBLE_EQ(run.rows[0].time_us.ci95_hi, 100.0);
}

TEST(Engine, AutoWithSteadyTimesStopsAtTheMinimum) {
  FakeBackend backend;
  RunConfig config = quiet_config();
  config.sizes = {1024, 1024, 2.0, 0};
  config.iters.reset();
  const SweepRun run = run_engine(config, backend, 2);
  ASSERT_EQ(run.rows.size(), 1u);
  EXPECT_EQ(run.rows[0].samples_us.size(), static_cast<std::size_t>(kMinSamplesPerSize));
  EXPECT_TRUE(run.rows[0].ci_target_met);
}

TEST(Engine, CiTargetNeedsTheMinimumSampleCount) {
  // -n 5 identical samples: a zero-width CI, but fewer than kMinSamplesPerSize samples.
  FakeBackend backend;
  RunConfig config = quiet_config();
  config.sizes = {1024, 1024, 2.0, 0};
  config.iters = kMinSamplesPerSize - 1;
  SweepRun run = run_engine(config, backend, 2);
  ASSERT_EQ(run.rows.size(), 1u);
  EXPECT_EQ(run.rows[0].samples_us.size(), static_cast<std::size_t>(kMinSamplesPerSize - 1));
  EXPECT_FALSE(run.rows[0].ci_target_met);
  config.iters = kMinSamplesPerSize;
  FakeBackend again;
  run = run_engine(config, again, 2);
  EXPECT_TRUE(run.rows[0].ci_target_met);
}

TEST(Engine, WrongElementsAreCounted) {
  FakeBackend backend;
  backend.wrong_per_case = 3;
  const SweepRun run = run_engine(quiet_config(), backend, 2);
  EXPECT_EQ(run.totals.wrong, 12u);
  for (const auto& row : run.rows) EXPECT_EQ(row.wrong, 3u);
}

TEST(Engine, CheckOffLaunchesNothingUntimed) {
  FakeBackend backend;
  RunConfig config = quiet_config();
  config.check = false;
  run_engine(config, backend, 2);
  EXPECT_EQ(backend.launches, 0);
}

TEST(Engine, AutoBatchComesFromTheWarmUpTime) {
  // batch 0: one op timed after the warm-up; 10 us < 100 us, so 16 back to back are timed too
  // (10 us each), and the batch is ceil(100 / 10) = 10 ops.
  FakeBackend backend;
  RunConfig config = quiet_config();
  config.sizes = {1024, 1024, 2.0, 0};
  config.batch = 0;
  config.warmup = 2;
  const SweepRun run = run_engine(config, backend, 2);
  ASSERT_EQ(run.rows.size(), 1u);
  EXPECT_EQ(run.rows[0].batch, 10);
  EXPECT_DOUBLE_EQ(run.rows[0].time_us.median, 10.0);
  EXPECT_EQ(backend.timed_batches, 2 + 12);
}

TEST(LocalChannel, IsOneRankAndAgreesWithItself) {
  LocalChannel channel;
  EXPECT_TRUE(channel.is_root());
  EXPECT_EQ(channel.size(), 1);
  EXPECT_EQ(channel.agree_on_error(""), std::nullopt);
  EXPECT_EQ(channel.agree_on_error("no GPU"), std::optional<std::string>("no GPU"));
  EXPECT_EQ(channel.gather_to_root("x"), std::vector<std::string>{"x"});
  EXPECT_THROW(agree_or_throw(channel, "bad"), AgreedSetupError);
}

}  // namespace
}  // namespace ccbench
