// `ccbench run` flags and their YAML twin (--config FILE: the same keys, flags win). The flags are
// declared once, in the row's flag set (cli/flag_sets/run.hpp); this is their parse and checks.
#pragma once

#include <string>
#include <vector>

#include "sweep/run_config.hpp"

namespace ccbench::cli {

// Parses argv (argv[0] is the program name) into `config`, which it replaces (the defaults are the
// flag set's). Throws UsageError with a message naming the flag, or
// the config file, key and line. Returns false when --help was printed.
// --expect and its companions, kept apart from RunConfig: the sweep never sees the model, only the
// check cli/run_expect builds from it.
struct ExpectFlags {
  std::string model_path;  // "" = none
  std::string band = "99";
  int stop_below = 0;  // 0 = never stop
};

bool parse_run_options(int argc, char** argv, RunConfig& config, bool print_help, ExpectFlags* expect = nullptr);

}  // namespace ccbench::cli
