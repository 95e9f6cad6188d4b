// `ccbench run`'s flags (docs/run.md), declared once: the values they are bound to live here; the
// parse (cli/run_options.cpp) checks them into the RunConfig. A new flag of `run` is one line in
// RunFlags's constructor (run.cpp) and, when its text is checked after parsing, a member here.
#pragma once

#include <memory>
#include <string>

#include "cli/flag_sets/flag_set.hpp"
#include "sweep/run_config.hpp"
#include "sweep/session_flags.hpp"

namespace ccbench::cli {

struct RunFlags : FlagSet {
  RunFlags();

  RunConfig config;  // bound where CLI11 parses the value itself
  SharedFlagText shared;
  // Kept as typed until every flag is parsed; the parse checks them naming the flag.
  std::string ops, dtype = "float", redop = "sum", in_place = "both", timing = "ccbench";
  std::string groups_spec = "none", link_gbps, config_path, percentiles;
  std::string registration = "0";  // -R
  std::string sendrecv_pattern = "ring", block_bytes;
  // --expect MODEL: every row judged against the model's band as it is measured (cli/run_expect).
  std::string expect_model, expect_band = "99";
  int stop_below = 0;
};

std::unique_ptr<CLI::App> run_flags();

}  // namespace ccbench::cli
