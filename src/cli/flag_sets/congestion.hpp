// `ccbench congestion`'s flags (docs/congestion.md), declared once: the values they are bound to live
// here; the parse (cli/congestion_command.cpp) checks them into the options.
#pragma once

#include <memory>
#include <string>

#include "cli/flag_sets/flag_set.hpp"
#include "congestion_run/run.hpp"
#include "sweep/run_config.hpp"
#include "sweep/session_flags.hpp"

namespace ccbench::cli {

struct CongestionFlags : FlagSet {
  CongestionFlags();

  RunConfig config;  // 4 trials, not in place: congestion's defaults
  congestion_run::CongestionOptions opt;
  SharedFlagText shared;
  // Kept as typed until every flag is parsed; the parse checks them naming the flag.
  std::string measured_hosts, measured_ranks, link_gbps, percentiles;
};

std::unique_ptr<CLI::App> congestion_flags();

}  // namespace ccbench::cli
