// `ccbench checkpoint` (docs/checkpoint.md): time to a durable checkpoint. This entry parses the
// flags (cli/checkpoint_options) and hands the run to checkpoint_run/ (set-up, trials, finish over
// the control channel and the target's engine) inside the measuring frame (measure/frame.hpp).
#include "checkpoint_run/run.hpp"
#include "cli/checkpoint_options.hpp"
#include "cli/measuring_commands.hpp"
#include "core/error.hpp"
#include "measure/frame.hpp"

namespace ccbench::cli {

int checkpoint_entry(measure::Frame& frame) {
  RunConfig config;
  CheckpointOptions opt;
  try {
    if (!parse_checkpoint_options(frame.argc(), frame.argv(), config, opt, frame.is_root())) return exit_code::ok;
  } catch (const UsageError& e) {
    return frame.usage_error(e.what());
  }
  // The set-up (storage probes, free space, memory bandwidth, the steps already there) is watched:
  // a hang there is exit 3.
  frame.ending().arm_setup(config.timeout_s);
  const std::vector<std::string> command(frame.argv(), frame.argv() + frame.argc());
  const int exit = checkpoint_run::run_checkpoint(frame.channel(), frame.ending(), config, opt, command);
  frame.ending().setup_done();  // an exit 2 before the trials returns with it armed
  return exit;
}

}  // namespace ccbench::cli
