// `ccbench replay`'s flags (docs/replay.md), declared once: the values they are bound to live here;
// the parse (cli/replay_command.cpp) checks them into the options.
#pragma once

#include <memory>

#include "cli/flag_sets/flag_set.hpp"
#include "replay/runner.hpp"
#include "sweep/run_config.hpp"
#include "sweep/session_flags.hpp"

namespace ccbench::cli {

struct ReplayFlags : FlagSet {
  ReplayFlags();

  RunConfig config;
  replay::ReplayOptions opt;
  SharedFlagText shared;
  std::string percentiles;  // checked against --steps after parsing
};

std::unique_ptr<CLI::App> replay_flags();

}  // namespace ccbench::cli
