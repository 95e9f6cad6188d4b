// `ccbench checkpoint`'s runtime (docs/checkpoint.md, "Where it lives"): the set-up (storage probe,
// node-local check, free space, step room, memory bandwidth, the header), the trials (write, commit,
// read; checkpoint_run/trials) and the finish, over the control channel and the target's engine.
// No MPI here: the frame (measure/) owns it, and a test runs the ranks as threads over a
// ThreadChannel with a memory engine. The command's flags are cli/checkpoint_options.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "checkpoint/storage.hpp"
#include "checkpoint_run/options.hpp"
#include "sweep/channel.hpp"
#include "sweep/run_config.hpp"
#include "sweep/run_ending.hpp"

namespace ccbench::checkpoint_run {

// What the set-up measures that a test makes small.
struct SetupTuning {
  std::size_t memory_copy_bytes = 32ULL << 20;  // the memory-bandwidth copy, per rank
};

// Collective: opens the target's engine (open_storage; an error every rank agrees on is exit 2),
// then run_on_storage. `command` is the command line as given, recorded in the result file.
int run_checkpoint(ControlChannel& ch, RunEnding& ending, const RunConfig& config, const CheckpointOptions& opt,
                   const std::vector<std::string>& command);

// Collective: the whole run over `storage`, every rank with its own Storage of one engine (or the
// same one). Returns the exit code: 0, 1 (a shard read back wrong), 2 (an agreed set-up error, or
// a trial whose storage failed: the finished trials kept, status "failed"). Hangs, signals, failed
// peers and any other error after the set-up end the rank through `ending`, which rank 0 has given
// the result writer (rows kept). Everything made here is gone before it returns.
int run_on_storage(ControlChannel& ch, RunEnding& ending, const RunConfig& config, const CheckpointOptions& opt,
                   checkpoint::Storage& storage, const std::vector<std::string>& command,
                   const SetupTuning& tuning = {});

}  // namespace ccbench::checkpoint_run
