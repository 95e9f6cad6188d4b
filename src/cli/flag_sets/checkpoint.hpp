// `ccbench checkpoint`'s flags (docs/checkpoint.md), declared once: the values they are bound to live
// here; the parse (cli/checkpoint_options.cpp) checks them into the options.
#pragma once

#include <memory>
#include <string>

#include "checkpoint_run/options.hpp"
#include "cli/flag_sets/flag_set.hpp"
#include "sweep/run_config.hpp"
#include "sweep/session_flags.hpp"

namespace ccbench::cli {

struct CheckpointFlags : FlagSet {
  CheckpointFlags();

  RunConfig config;
  checkpoint_run::CheckpointOptions opt;
  SharedFlagText shared;
  // Kept as typed until every flag is parsed; the parse checks them naming the flag.
  std::string shard, transfer = "16M", layout = "file-per-rank", phases = "write,read", tier_gbps, per_tib, capacity;
  std::string part_size = "64M", export_deadline;
  bool no_fsync = false;
};

std::unique_ptr<CLI::App> checkpoint_flags();

}  // namespace ccbench::cli
