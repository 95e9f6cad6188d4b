// The measurement engine: runs the plan trial by trial over a backend and hands finished results
// to an observer on rank 0. Warm-up, batching, adaptive sampling, the data check and cross-rank
// aggregation live here; the backend only allocates, fills, launches, times and verifies.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "core/groups.hpp"
#include "core/result.hpp"
#include "sweep/channel.hpp"
#include "sweep/plan.hpp"
#include "sweep/run_config.hpp"
#include "sweep/watchdog.hpp"

namespace ccbench {

// Receives results on rank 0 as they finish (the result file, the JSON-lines stream, the table and
// the progress line are observers; none of them measures anything).
class SweepObserver {
 public:
  virtual ~SweepObserver() = default;
  virtual void on_op_begin(int /*trial*/, Op /*op*/) {}
  virtual void on_result(const ResultRow& /*row*/) {}
  // All variants (out-of-place, in-place) of one size are done.
  virtual void on_size_done(int /*trial*/, Op /*op*/, std::span<const ResultRow> /*rows*/) {}
};

// Concurrent groups (--groups): the layout and this rank's group channel (ControlChannel::split of
// the job's channel by group). The engine still takes every barrier, decision and the row's time
// over the job's channel; the group channel only forms each group's own time of every sample.
struct EngineGroups {
  const groups::Layout* layout = nullptr;
  ControlChannel* channel = nullptr;
  int nodes_per_group = 1;  // the most hosts any group spans (recorded in each row)
};

// Why a check ended the sweep early: the exit code and the one line that says why.
struct SweepStop {
  int exit_code = 0;
  std::string message;
};

// Looks at the sweep after each size, on every rank (collective), and may end it early: the
// --require-path probe (sweep/path_probe), --stop-below. Injected, as the observer is.
class SweepCheck {
 public:
  virtual ~SweepCheck() = default;
  // Rank 0, before the row goes to the observers (a field of the check's in the row).
  virtual void annotate(ResultRow& /*row*/) {}
  // Every rank, after all variants of a size: nullopt to go on. `rows` are rank 0's (empty
  // elsewhere); the answer must be the same on every rank.
  virtual std::optional<SweepStop> after_size(int trial, Op op, std::span<const ResultRow> rows) = 0;
};

struct SweepTotals {
  std::uint64_t wrong = 0;
  std::size_t results = 0;
  std::size_t ci_met = 0;
  std::optional<SweepStop> stop;  // a check ended the sweep before the plan's end
};

// A matrix op's row fields (extra "matrix"; docs/result-format.md): its source, imbalance, off-rank
// bytes, the most loaded rank and, when the link rate is known (Gbit/s), the time its bytes need.
nlohmann::json matrix_row_json(const MatrixCase& matrix, double median_us, double link_gbps);

class Engine {
 public:
  // The channel is injected (MpiChannel in a run, LocalChannel in unit tests), as Google Benchmark
  // injects its thread runner.
  Engine(const RunConfig& config, const Plan& plan, Backend& backend, ControlChannel& channel, Watchdog& watchdog,
         SweepObserver& observer);

  // Measure concurrent groups (docs/method.md "Concurrent groups"): call before run().
  void set_groups(const EngineGroups& groups) { groups_ = groups; }
  // Checks run after each size, in the order added (call before run()).
  void add_check(SweepCheck& check) { checks_.push_back(&check); }

  SweepTotals run();

 private:
  ResultRow measure(int trial, const CaseSpec& c);
  int choose_batch(const CaseSpec& c);
  bool grouped() const { return groups_.layout != nullptr && groups_.layout->grouped(); }

  const RunConfig& config_;
  const Plan& plan_;
  Backend& backend_;
  ControlChannel& channel_;
  Watchdog& watchdog_;
  SweepObserver& observer_;
  EngineGroups groups_;
  std::vector<SweepCheck*> checks_;
  int corrupt_rank_ = -1;  // CCBENCH_TEST_CORRUPT_RANK: test-only hook, see docs/method.md
};

}  // namespace ccbench
