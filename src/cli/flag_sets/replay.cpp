#include "cli/flag_sets/replay.hpp"

#include "cli/parse_flags.hpp"
#include "sweep/percentiles_flag.hpp"
#include "sweep/run_flags.hpp"

namespace ccbench::cli {

ReplayFlags::ReplayFlags()
    : FlagSet("ccbench replay: a traced job's collectives replayed rank by rank (launch with mpirun or srun)",
              replay::kCommand) {
  add_shared_flags(*this, config, shared, "call");
  // The trace gives the sizes and the order; a step is one pass over it, not a sampled size.
  remove_flags(*this, {"--min-bytes", "--max-bytes", "--step-factor", "--step-bytes", "--progress", "-w", "--iters",
                       "--max-time-per-size", "--batch",
                       // Replay's loop does not run the path probe yet (docs/path-proof.md, "Not yet").
                       "--require-path", "--require-rails"});
  get_option("--trials")->description("trials: runs of --steps steps, one set of rows each");
  get_option("--target-ci")->description("a row's CI target (ci_target_met): the median's 95% CI within this fraction");
  add_option("trace", opt.trace_path, "the trace (ccbench trace import ... --out TRACE.json)")->required();
  add_option("--steps", opt.steps, "steps per trial: passes over each rank's traced calls")->default_val(opt.steps);
  add_option("--gaps", opt.gaps_text,
             "compute gaps before each call: traced, none, or a factor on the traced gaps (0.5)")
      ->default_str(opt.gaps_text);
  add_percentiles_flag(*this, percentiles, "one step a sample, for the step and each call site");
  add_option("--ranks-map", opt.ranks_map,
             "the trace rank each job rank replays, e.g. 0,1,0,1 (needed when the job's size differs)");
  add_option("--log-calls", opt.log_calls,
             "each rank writes the calls it issued to PREFIX.rankR.json after the last trial");
  add_backend_flag(*this, config.backend, "mpi (host memory) or nccl (GPUs)")->default_val(config.backend);
}

std::unique_ptr<CLI::App> replay_flags() { return std::make_unique<ReplayFlags>(); }

}  // namespace ccbench::cli
