// `ccbench replay` over the control channel and the backends of `run` (docs/replay.md): one
// communicator per traced group and copy, split once up front; each rank's calls in the traced
// order with the traced gaps; rows per call site and the step's row per trial. The flags and what
// is printed are cli/replay_command.cpp.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "core/replay_fields.hpp"
#include "core/result.hpp"
#include "replay/plan.hpp"
#include "sweep/channel.hpp"
#include "sweep/run_config.hpp"
#include "sweep/run_ending.hpp"

namespace ccbench::replay {

inline constexpr const char* kCommand = "ccbench replay";
// The step's row: its samples are the step's communication time (docs/replay.md, "Result file").
inline constexpr std::string_view kStepOp = kReplayStepOp;

struct ReplayOptions {
  std::string trace_path;
  std::string ranks_map;  // as given ("" = identity)
  Gaps gaps;
  std::string gaps_text = "traced";
  int steps = 10;                    // replayed steps per trial
  std::string log_calls;             // --log-calls PREFIX: each rank's call log ("" = none)
  std::vector<std::string> command;  // recorded in the result file
};

// What the command prints, called on rank 0 (the caller owns the text).
class Printer {
 public:
  virtual ~Printer() = default;
  virtual void start(const ReplayPlan& plan, const ReplayOptions& opt, int trials) = 0;
  // A trial's rows: the call sites', then the step's.
  virtual void trial(const std::vector<ResultRow>& rows) = 0;
  virtual void finished(const std::string& result_path, std::uint64_t wrong, int exit_code) = 0;
};

using MakeBackend = std::function<std::unique_ptr<Backend>(std::string_view name, const BackendOptions& options)>;
MakeBackend registry_backends();

// The rows of one trial from rank 0's maxima over the ranks: samples[s][k] is step s's time of
// call site k (k = sites.size(): the whole step). Pure, for the unit tests.
std::vector<ResultRow> trial_rows(const ReplayPlan& plan, const std::string& backend, int trial,
                                  const std::vector<std::vector<double>>& samples, std::uint64_t wrong,
                                  double target_ci, std::span<const double> percentiles = {});

// Collective: the communicators, the header, the trials. Returns the exit code; hangs, signals,
// failed peers and errors while replaying end the rank through `ending`, which keeps every
// finished step.
int run_replay(ControlChannel& world, RunEnding& ending, const RunConfig& config, const ReplayOptions& opt,
               const ReplayPlan& plan, Printer& printer, const MakeBackend& make_backend = registry_backends());

}  // namespace ccbench::replay
