// `ccbench checkpoint`'s flags (docs/checkpoint.md): the target and its tier, the shard plan, the I/O
// and the phases, plus the shared ones (-J, -T, --trials, --seed, --label) from sweep/session_flags.
#pragma once

#include "checkpoint_run/options.hpp"
#include "sweep/run_config.hpp"

namespace ccbench::cli {

using checkpoint_run::CheckpointLayout;
using checkpoint_run::CheckpointOptions;

// Returns false when --help was printed. Throws UsageError with one line naming the flag.
bool parse_checkpoint_options(int argc, char** argv, RunConfig& config, CheckpointOptions& opt, bool print_help);

}  // namespace ccbench::cli
