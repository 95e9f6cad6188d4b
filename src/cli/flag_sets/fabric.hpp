// `ccbench fabric`'s flags (docs/fabric.md), declared once: the values they are bound to live here;
// the parse (cli/fabric_options.cpp) checks them into the FabricConfig.
#pragma once

#include <memory>
#include <string>

#include "cli/flag_sets/flag_set.hpp"
#include "fabric/fabric_options.hpp"
#include "sweep/session_flags.hpp"

namespace ccbench::cli {

struct FabricFlags : FlagSet {
  FabricFlags();

  fabric::FabricConfig config;  // its run: backend libfabric, uint8, not in place, 8 to 4M bytes
  SharedFlagText shared;
  // Kept as typed until every flag is parsed; the parse checks them naming the flag.
  std::string ops = "pingpong,bw", memory = "host", percentiles;
};

std::unique_ptr<CLI::App> fabric_flags();

}  // namespace ccbench::cli
