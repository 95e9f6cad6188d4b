// `ccbench fabric`'s parse: the flags of the row's flag set (cli/flag_sets/fabric.hpp) from argv,
// checked into a FabricConfig.
#pragma once

#include "fabric/fabric_options.hpp"

namespace ccbench::cli {

// Parses argv (argv[0] is the program name) into `config`, which it replaces. Throws UsageError
// naming the flag. Returns false when --help was printed.
bool parse_fabric_options(int argc, char** argv, fabric::FabricConfig& config, bool print_help);

}  // namespace ccbench::cli
