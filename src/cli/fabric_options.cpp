#include "cli/fabric_options.hpp"

#ifdef CCBENCH_HAVE_LIBFABRIC  // parse_fabric_ops and the MemoryKind names are the fabric library's

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/flag_sets/fabric.hpp"
#include "core/error.hpp"
#include "sweep/flag_suggestion.hpp"
#include "sweep/percentiles_flag.hpp"

namespace ccbench::cli {

using fabric::MemoryKind;

bool parse_fabric_options(int argc, char** argv, fabric::FabricConfig& config, bool print_help) {
  FabricFlags flags;  // the row's flag set
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) args.emplace_back(argv[i]);  // CLI11 consumes a reversed vector
  try {
    flags.parse(args);
  } catch (const CLI::CallForHelp&) {
    if (print_help) std::cout << flags.help();
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(ccbench::parse_error_text(flags, e));
  }
  config = std::move(flags.config);
  RunConfig& run = config.run;
  run.ops = fabric::parse_fabric_ops(flags.ops);
  apply_shared_flags(run, flags.shared);
  apply_percentiles_flag(run, flags.percentiles);
  if (run.sizes.min_bytes == 0) throw UsageError("-b/--min-bytes must be at least 1");
  if (config.window < 1 || config.window > 4096) throw UsageError("--window must be in 1..4096");
  if (flags.memory == "host") {
    config.memory = MemoryKind::host;
  } else if (flags.memory == "cuda") {
    config.memory = MemoryKind::cuda;
  } else {
    throw UsageError("--memory: expected host or cuda, got '" + flags.memory + "'");
  }
  return true;
}

}  // namespace ccbench::cli

#endif
