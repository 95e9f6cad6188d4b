// `ccbench checkpoint`'s runtime (checkpoint_run/run.hpp) in one process: ranks as threads over
// ThreadChannel, the target one MemoryStorage every rank shares. A whole run gives the rows its
// trials measured and commits its steps in order with their manifests; a rank failing at any one of
// the run's collective steps (each in turn, counted here, not hard-coded) ends every rank with the
// ladder's codes (2 on the failing rank, 4 on the others), never a hang, and the rows of the
// phases that finished before it are kept in the result file.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "../measure/rank_threads.hpp"
#include "checkpoint/memory_storage.hpp"
#include "checkpoint/step_dirs.hpp"
#include "checkpoint_run/run.hpp"
#include "core/error.hpp"
#include "core/result.hpp"

namespace ccbench {
namespace {

namespace fs = std::filesystem;
using checkpoint::MemoryStorage;
using checkpoint_run::CheckpointOptions;
using testing::run_ranks;
using testing::TempDir;

constexpr const char* kTarget = "/mem/ckpt";
constexpr std::uint64_t kShardBytes = 64 << 10;
constexpr std::uint64_t kTransferBytes = 16 << 10;
// A run that takes longer than this is a hang (a clean run of these sizes takes milliseconds).
constexpr auto kNoHang = std::chrono::seconds(30);

// The rank's channel, counting its collective calls (one step each; agree_on_error is three). On
// the failing rank, call number `fail_at` throws instead of taking part, as a rank whose code
// raised there would. `on_step` sees each call's number before it runs.
class StepChannel final : public ControlChannel {
 public:
  StepChannel(ControlChannel& inner, int fail_at, std::function<void(int)> on_step)
      : inner_(inner), fail_at_(fail_at), on_step_(std::move(on_step)) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  int local_rank() const override { return inner_.local_rank(); }
  int local_size() const override { return inner_.local_size(); }
  void barrier() override {
    step();
    inner_.barrier();
  }
  int broadcast(int value) override { return step(), inner_.broadcast(value); }
  std::string broadcast(const std::string& value) override { return step(), inner_.broadcast(value); }
  double broadcast(double value) override { return step(), inner_.broadcast(value); }
  std::vector<std::string> gather_to_root(const std::string& value) override {
    return step(), inner_.gather_to_root(value);
  }
  double max_all(double value) override { return step(), inner_.max_all(value); }
  std::uint64_t sum_all(std::uint64_t value) override { return step(), inner_.sum_all(value); }
  void max_to_root(std::vector<double>& values) override {
    step();
    inner_.max_to_root(values);
  }
  void mean_to_root(std::vector<double>& values) override {
    step();
    inner_.mean_to_root(values);
  }
  std::unique_ptr<ControlChannel> split(int color) override { return step(), inner_.split(color); }
  std::unique_ptr<PendingBarrier> start_barrier() override { return step(), inner_.start_barrier(); }
  int steps() const { return steps_; }

 private:
  void step() {
    if (on_step_) on_step_(steps_);
    if (steps_ == fail_at_) throw std::runtime_error(fmt::format("injected failure at collective step {}", steps_));
    ++steps_;
  }
  ControlChannel& inner_;
  int fail_at_;
  std::function<void(int)> on_step_;
  int steps_ = 0;
};

struct Setting {
  int ranks = 2;
  int trials = 2;
  int keep = 0;
  int fail_rank = -1;  // the rank whose collective step `fail_at` throws
  int fail_at = -1;
  std::function<void(int)> on_root_step = nullptr;  // rank 0's steps
};

struct Outcome {
  std::vector<int> codes;
  std::vector<int> steps;  // each rank's collective steps taken
  std::string err;
};

// Runs the whole command body as the frame does (its guard, "set-up"), every rank over `storage`,
// and aborts the test binary when the ranks do not all end within kNoHang.
Outcome run_checkpoint_threads(const Setting& s, checkpoint::Storage& storage, const fs::path& json) {
  RunConfig config;
  config.trials = s.trials;
  config.timeout_s = 0;
  config.json_path = json.string();
  CheckpointOptions opt;
  opt.target = kTarget;
  opt.shard_bytes = kShardBytes;
  opt.transfer_bytes = kTransferBytes;
  opt.keep = s.keep;
  Outcome out;
  out.steps.assign(static_cast<std::size_t>(s.ranks), 0);
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  std::thread runner([&, done] {
    out.codes = run_ranks(
        s.ranks,
        [&](measure::Frame& frame) {
          const int rank = frame.channel().rank();
          StepChannel channel(frame.channel(), rank == s.fail_rank ? s.fail_at : -1,
                              rank == 0 ? s.on_root_step : std::function<void(int)>());
          struct Count {
            StepChannel& channel;
            int& steps;
            ~Count() { steps = channel.steps(); }
          } count{channel, out.steps[static_cast<std::size_t>(rank)]};
          return frame.ending().guard(
              [&] {
                return checkpoint_run::run_on_storage(channel, frame.ending(), config, opt, storage,
                                                      {"ccbench checkpoint"}, {.memory_copy_bytes = 1 << 20});
              },
              [] { return std::string("set-up"); });
        },
        "ccbench checkpoint");
    done->set_value();
  });
  if (finished.wait_for(kNoHang) != std::future_status::ready) {
    std::fprintf(stderr, "a checkpoint run hung: rank %d failing at step %d\n", s.fail_rank, s.fail_at);
    std::abort();  // the ranks' threads cannot be ended one by one; the test fails here
  }
  runner.join();
  ::testing::internal::GetCapturedStdout();
  out.err = ::testing::internal::GetCapturedStderr();
  return out;
}

// The memory engine, except that the `fail_on`-th creation of the file named `name` (counted
// over every rank) fails as a full disk would.
class FullOnNthCreate final : public checkpoint::Storage {
 public:
  FullOnNthCreate(MemoryStorage& inner, std::string name, int fail_on)
      : inner_(inner), name_(std::move(name)), fail_on_(fail_on) {}
  checkpoint::Engine engine() const override { return inner_.engine(); }
  std::string refuses(const checkpoint::EngineRequest& asked) const override { return inner_.refuses(asked); }
  std::string io_summary(const checkpoint::IoSettings& io) const override { return inner_.io_summary(io); }
  std::string target_type(const std::string& target) const override { return inner_.target_type(target); }
  bool one_namespace() const override { return inner_.one_namespace(); }
  std::optional<std::uint64_t> free_bytes(const std::string& target) override { return inner_.free_bytes(target); }
  bool local_cache() const override { return inner_.local_cache(); }
  std::unique_ptr<checkpoint::StorageFile> open(const std::string& path, checkpoint::OpenFor mode,
                                                const checkpoint::OpenOptions& options) override {
    if (mode == checkpoint::OpenFor::create_write && fs::path(path).filename() == name_ && ++creates_ == fail_on_)
      throw checkpoint::StorageError(ENOSPC, "open", path, 0);
    return inner_.open(path, mode, options);
  }
  void make_dir(const std::string& path) override { inner_.make_dir(path); }
  void remove_tree(const std::string& path) override { inner_.remove_tree(path); }
  void rename(const std::string& from, const std::string& to) override { inner_.rename(from, to); }
  void sync_dir(const std::string& path) override { inner_.sync_dir(path); }
  checkpoint::Eviction evict(const std::string& path) override { return inner_.evict(path); }
  std::string unusable(const std::string& target) override { return inner_.unusable(target); }
  std::vector<std::string> entries(const std::string& dir) override { return inner_.entries(dir); }
  std::optional<std::string> read_manifest(const std::string& step_dir) override {
    return inner_.read_manifest(step_dir);
  }
  std::string remove_step(const checkpoint::CommittedStep& step) override { return inner_.remove_step(step); }

 private:
  MemoryStorage& inner_;
  std::string name_;
  int fail_on_;
  std::atomic<int> creates_{0};
};

// The rows rank 0 has streamed so far (PATH.jsonl, one row a line; none before the first).
std::size_t streamed_rows(const fs::path& json) {
  std::ifstream in(jsonl_path_for(json));
  std::size_t rows = 0;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) ++rows;
  return rows;
}

TEST(CheckpointRun, AWholeRunGivesTheRowsItsTrialsMeasuredAndCommitsItsStepsInOrder) {
  TempDir dir("ccbench_checkpoint_run_test");
  MemoryStorage storage({"/mem", kTarget});
  constexpr int kRanks = 3, kTrials = 2;
  const Outcome run =
      run_checkpoint_threads({.ranks = kRanks, .trials = kTrials, .keep = kTrials}, storage, dir.path() / "c.json");
  ASSERT_EQ(run.codes, (std::vector<int>{0, 0, 0})) << run.err;
  EXPECT_EQ(run.steps[0], run.steps[1]);  // every rank took every collective step
  EXPECT_EQ(run.steps[0], run.steps[2]);

  const ResultFile file = load_result_file(dir.path() / "c.json");
  EXPECT_EQ(file.run.status, "complete");
  EXPECT_EQ(file.run.exit_code, 0);
  EXPECT_EQ(file.config["backend"], "memory");
  ASSERT_EQ(file.results.size(), 3u * kTrials);  // write, commit, read per trial
  const char* ops[] = {"checkpoint_write", "checkpoint_commit", "checkpoint_read"};
  for (int trial = 0; trial < kTrials; ++trial) {
    for (int p = 0; p < 3; ++p) {
      const ResultRow& row = file.results[static_cast<std::size_t>(3 * trial + p)];
      EXPECT_EQ(row.op, ops[p]);
      EXPECT_EQ(row.trial, trial);
      EXPECT_EQ(row.backend, "memory");
      EXPECT_EQ(row.bytes, kRanks * kShardBytes);  // every rank's shard, written and read back whole
      EXPECT_EQ(row.ranks, kRanks);
      EXPECT_EQ(row.extra["checkpoint"]["step"], fmt::format("step-{:06d}", trial + 1));
    }
    const ResultRow& write = file.results[static_cast<std::size_t>(3 * trial)];
    ASSERT_EQ(write.extra["checkpoint"]["per_rank"].size(), static_cast<std::size_t>(kRanks));
    const ResultRow& read = file.results[static_cast<std::size_t>(3 * trial + 2)];
    EXPECT_EQ(read.wrong, 0u);
    EXPECT_EQ(read.extra["cache_drop"], "remote");  // the memory engine has no page cache to drop
    ASSERT_EQ(read.extra["checkpoint"]["per_rank"].size(), static_cast<std::size_t>(kRanks));
  }

  // --keep 2: both steps stay, committed in trial order, each with its manifest and every shard.
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::string step = fmt::format("{}/step-{:06d}", kTarget, trial + 1);
    const auto text = storage.read_manifest(step);
    ASSERT_TRUE(text) << step;
    const auto manifest = checkpoint::parse_manifest(*text, step);
    ASSERT_TRUE(manifest) << *text;
    EXPECT_EQ(manifest->step, trial + 1);
    EXPECT_EQ(manifest->trial, trial);
    EXPECT_EQ(manifest->shard_bytes, kShardBytes);
    EXPECT_EQ(manifest->shards, static_cast<std::size_t>(kRanks));
    EXPECT_EQ(manifest->files, (std::vector<std::string>{checkpoint::shard_name(0), checkpoint::shard_name(1),
                                                         checkpoint::shard_name(2)}));
    EXPECT_EQ(nlohmann::json::parse(*text)["bytes"], kRanks * kShardBytes);
  }
  // Nothing partial is left behind: the two steps' manifests and shards are all the target holds.
  std::vector<std::string> expected = {"/mem/", std::string(kTarget) + "/"};
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::string step = fmt::format("{}/step-{:06d}", kTarget, trial + 1);
    expected.push_back(step + "/");
    expected.push_back(step + "/" + checkpoint::kManifestName);
    for (int w = 0; w < kRanks; ++w) expected.push_back(step + "/" + checkpoint::shard_name(w));
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(storage.paths(), expected);
}

TEST(CheckpointRun, WithoutKeepTheRunRemovesTheStepsItCommitted) {
  TempDir dir("ccbench_checkpoint_run_test");
  MemoryStorage storage({"/mem", kTarget});
  const Outcome run = run_checkpoint_threads({.ranks = 2, .trials = 2}, storage, dir.path() / "c.json");
  ASSERT_EQ(run.codes, (std::vector<int>{0, 0})) << run.err;
  EXPECT_EQ(load_result_file(dir.path() / "c.json").results.size(), 6u);
  EXPECT_EQ(storage.paths(), (std::vector<std::string>{"/mem/", std::string(kTarget) + "/"}));
}

// Rank 1's shard cannot be created in the second trial (ENOSPC): every rank agrees the trial
// failed and ends with 2, the first trial's rows are kept with status "failed" and the error naming
// the file, and nothing of the run is left on the target (the partial step and the first trial's
// step removed).
TEST(CheckpointRun, AStorageErrorOnOneRankFailsTheTrialOnEveryRankAndKeepsTheFinishedOne) {
  TempDir dir("ccbench_checkpoint_run_test");
  MemoryStorage memory({"/mem", kTarget});
  FullOnNthCreate storage(memory, checkpoint::shard_name(1), 2);
  const Outcome run = run_checkpoint_threads({.ranks = 2, .trials = 3}, storage, dir.path() / "c.json");
  ASSERT_EQ(run.codes, (std::vector<int>{exit_code::usage, exit_code::usage})) << run.err;
  EXPECT_NE(run.err.find("ccbench checkpoint: trial 1 failed, its partial step /mem/ckpt/.step-000002.partial-"),
            std::string::npos)
      << run.err;
  const ResultFile file = load_result_file(dir.path() / "c.json");
  EXPECT_EQ(file.run.status, "failed");
  EXPECT_EQ(file.run.exit_code, exit_code::usage);
  ASSERT_EQ(file.results.size(), 3u);  // trial 0's write, commit and read
  for (const auto& row : file.results) EXPECT_EQ(row.trial, 0);
  ASSERT_TRUE(file.run.error);
  EXPECT_NE(file.run.error->find("rank-00001.shard"), std::string::npos) << *file.run.error;
  EXPECT_NE(file.run.error->find("ENOSPC"), std::string::npos) << *file.run.error;
  EXPECT_EQ(memory.paths(), (std::vector<std::string>{"/mem/", std::string(kTarget) + "/"}));
}

// Every collective step of a 2-rank, 2-trial run, failed in turn on rank 0 and on rank 1: every
// rank ends (bounded by kNoHang), the failing rank with 2 (an error while running, "failed"), the
// other with 4 (a failed peer), and the result file holds exactly the rows rank 0 had streamed
// before that step in a clean run (none: no file or an empty one).
TEST(CheckpointRun, ARankFailingAtAnyCollectiveStepEndsEveryRankAndKeepsTheFinishedTrials) {
  TempDir dir("ccbench_checkpoint_run_test");
  const fs::path clean_json = dir.path() / "clean.json";
  std::vector<std::size_t> rows_before;  // at rank 0's step k of a clean run
  {
    MemoryStorage storage({"/mem", kTarget});
    Setting clean{.ranks = 2, .trials = 2};
    clean.on_root_step = [&](int) { rows_before.push_back(streamed_rows(clean_json)); };
    const Outcome run = run_checkpoint_threads(clean, storage, clean_json);
    ASSERT_EQ(run.codes, (std::vector<int>{0, 0})) << run.err;
    ASSERT_EQ(run.steps[0], run.steps[1]);
    ASSERT_EQ(rows_before.size(), static_cast<std::size_t>(run.steps[0]));
    ASSERT_EQ(load_result_file(clean_json).results.size(), 6u);
  }
  const int steps = static_cast<int>(rows_before.size());
  ASSERT_GT(steps, 20);  // the set-up, two trials and the finish: far more than a handful
  EXPECT_EQ(rows_before.front(), 0u);
  EXPECT_EQ(rows_before.back(), 6u);  // the last step (the agreed exit) comes after every row

  for (int fail_rank = 0; fail_rank < 2; ++fail_rank) {
    for (int k = 0; k < steps; ++k) {
      SCOPED_TRACE(fmt::format("rank {} fails at collective step {} of {}", fail_rank, k, steps));
      const fs::path json = dir.path() / fmt::format("fail-{}-{}.json", fail_rank, k);
      MemoryStorage storage({"/mem", kTarget});
      const Outcome run =
          run_checkpoint_threads({.ranks = 2, .trials = 2, .fail_rank = fail_rank, .fail_at = k}, storage, json);
      std::vector<int> expected(2, exit_code::peer_failed);
      expected[static_cast<std::size_t>(fail_rank)] = exit_code::usage;
      ASSERT_EQ(run.codes, expected) << run.err;
      EXPECT_NE(run.err.find(
                    fmt::format("ccbench checkpoint: rank {}: injected failure at collective step {}", fail_rank, k)),
                std::string::npos)
          << run.err;
      const std::size_t kept = rows_before[static_cast<std::size_t>(k)];
      if (kept == 0) {
        if (fs::exists(json)) {
          EXPECT_EQ(load_result_file(json).results.size(), 0u);
        }
        continue;
      }
      const ResultFile file = load_result_file(json);
      EXPECT_EQ(file.results.size(), kept);
      EXPECT_EQ(file.run.exit_code, run.codes[0]);
      EXPECT_EQ(file.run.status, fail_rank == 0 ? "failed" : "incomplete");
    }
  }
}

}  // namespace
}  // namespace ccbench
