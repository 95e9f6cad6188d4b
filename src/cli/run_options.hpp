// `ccbench run` flags and their YAML twin (--config FILE: the same keys, flags win).
#pragma once

#include <string>
#include <vector>

#include "sweep/run_config.hpp"

namespace ccbench::cli {

// Parses argv (argv[0] is the program name). Throws UsageError with a message naming the flag, or
// the config file, key and line. Returns false when --help was printed.
bool parse_run_options(int argc, char** argv, RunConfig& config, bool print_help);

}  // namespace ccbench::cli
