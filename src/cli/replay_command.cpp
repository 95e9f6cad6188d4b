// `ccbench replay TRACE.json` (docs/replay.md, "Replay"): a job's traced calls replayed rank by
// rank over the backends of `run`. This file is the command's flags, their checks against the
// trace and what it prints; the plan (mapping, groups, call sites) and the loop are replay/.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/flag_sets/replay.hpp"
#include "cli/measuring_commands.hpp"
#include "cli/parse_flags.hpp"
#include "core/error.hpp"
#include "core/output_folders.hpp"
#include "core/result.hpp"
#include "core/sizes.hpp"
#include "measure/frame.hpp"
#include "replay/call_log.hpp"
#include "replay/plan.hpp"
#include "replay/runner.hpp"
#include "report/console_table.hpp"
#include "sweep/describe_run.hpp"
#include "sweep/percentiles_flag.hpp"
#include "trace/trace.hpp"

namespace ccbench::cli {
namespace {

using replay::kCommand;
using replay::ReplayOptions;

constexpr int kMaxSteps = 1000000;

// Returns false when --help was printed. Throws UsageError naming the flag.
bool parse_options(int argc, char** argv, RunConfig& config, ReplayOptions& opt, bool print_help) {
  ReplayFlags flags;  // the row's flag set (cli/flag_sets/replay.hpp)
  if (!parse_flags_or_help(flags, argc, argv, print_help)) return false;
  config = std::move(flags.config);
  opt = std::move(flags.opt);
  apply_shared_flags(config, flags.shared);
  if (opt.steps < 1 || opt.steps > kMaxSteps) {
    throw UsageError(fmt::format("--steps: from 1 to {}, got {}", kMaxSteps, opt.steps));
  }
  if (config.trials < 1) throw UsageError(fmt::format("--trials: must be at least 1, got {}", config.trials));
  config.percentiles = percentiles_for_fixed_samples(flags.percentiles, opt.steps, "--steps");
  opt.gaps = replay::parse_gaps(opt.gaps_text);
  return true;
}

// Rank 0's lines on stdout (stderr for a failed data check).
class ConsolePrinter final : public replay::Printer {
 public:
  explicit ConsolePrinter(std::vector<double> levels) : levels_(std::move(levels)) {}
  void start(const replay::ReplayPlan& plan, const ReplayOptions& opt, int trials) override {
    std::printf("# replay %s: %d trace ranks on %d ranks (%d cop%s), %zu call sites, %zu calls per step on rank 0\n",
                opt.trace_path.c_str(), plan.trace_world_size, plan.world_size, plan.map.copies,
                plan.map.copies == 1 ? "y" : "ies", plan.sites.size(), plan.calls.front().size());
    std::printf("# %d trial%s x %d steps, gaps %s\n", trials, trials == 1 ? "" : "s", opt.steps, opt.gaps_text.c_str());
    std::printf("# %5s %-14s %-9s %12s %8s %6s %6s %12s %8s %8s%s\n", "trial", "op", "dtype", "bytes", "group", "ranks",
                "calls", "time (us)", "ci (±%)", "of step", report::percentile_header(levels_, false, 1).c_str());
    std::fflush(stdout);
  }
  void trial(const std::vector<ResultRow>& rows) override {
    for (const ResultRow& row : rows) {
      const auto& r = row.extra["replay"];
      const double median = row.time_us.median;
      const double ci =
          median > 0 ? 100.0 * std::max(median - row.time_us.ci95_lo, row.time_us.ci95_hi - median) / median : 0.0;
      const bool site = r.value("kind", "") == "call_site";
      std::printf("  %5d %-14s %-9s %12s %8s %6d %6llu %12.2f %8.1f %8s%s\n", row.trial, row.op.c_str(),
                  row.dtype.c_str(), format_bytes(row.bytes).c_str(), site ? r.value("group", "").c_str() : "-",
                  row.ranks, static_cast<unsigned long long>(r.value("calls", 0ULL)), median, ci,
                  site ? fmt::format("{:.1f}%", 100.0 * r.value("fraction_of_step", 0.0)).c_str() : "-",
                  report::percentile_columns(&row, levels_).c_str());
    }
    std::fflush(stdout);
  }
  void finished(const std::string& result_path, std::uint64_t wrong, int exit_code) override {
    if (wrong > 0) {
      std::fprintf(stderr, "%s: data check failed: %llu wrong elements\n", kCommand,
                   static_cast<unsigned long long>(wrong));
    }
    if (!result_path.empty()) std::printf("# result file: %s\n", result_path.c_str());
    std::printf("# exit %d\n", exit_code);
    std::fflush(stdout);
  }

 private:
  std::vector<double> levels_;  // --percentiles: each level's time and CI columns (us, ±%)
};

}  // namespace

int replay_entry(measure::Frame& frame) {
  ControlChannel& world = frame.channel();
  RunConfig config;
  ReplayOptions opt;
  try {
    if (!parse_options(frame.argc(), frame.argv(), config, opt, world.is_root())) return exit_code::ok;
  } catch (const UsageError& e) {
    return frame.usage_error(e.what());
  }
  // Every rank reads the trace and makes the same plan (or the same error: one line).
  replay::ReplayPlan plan;
  std::string error;
  try {
    for (const auto& written :
         {config.json_path, config.json_path.empty() ? std::string() : jsonl_path_for(config.json_path).string()})
      refuse_output_among_inputs(written, "-J/--json", {opt.trace_path});
    const trace::Trace trace = trace::load(opt.trace_path);
    const replay::RankMap map = opt.ranks_map.empty()
                                    ? replay::identity_map(trace.world_size, world.size())
                                    : replay::parse_rank_map(opt.ranks_map, trace.world_size, world.size());
    plan = replay::make_plan(trace, map, opt.trace_path);
    if (!opt.log_calls.empty()) prepare_output_file(replay::call_log_path(opt.log_calls, world.rank()), "--log-calls");
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (auto failed = frame.agree_or_usage_error(error)) return *failed;
  opt.command = recorded_command(kCommand, frame.argc(), frame.argv());
  ConsolePrinter printer(config.percentiles);
  return replay::run_replay(world, frame.ending(), config, opt, plan, printer);
}

}  // namespace ccbench::cli
