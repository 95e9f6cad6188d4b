// `ccbench run --percentiles LIST`: per-iteration samples (one op a sample, the slowest rank) and
// the percentiles every row reports with their order-statistic intervals (docs/method.md
// "Percentiles"). The checks against -n, --batch and --timing live here, once.
#pragma once

#include <string>

#include "sweep/run_config.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace ccbench {

CLI::Option* add_percentiles_flag(CLI::App& app, std::string& text);

// After every other flag is applied: sets config.percentiles, the batch (1) and the fewest samples a
// size takes under -n auto (enough for the widest level's interval). Throws UsageError naming
// --percentiles and the flag it conflicts with: --timing nccl-tests, --batch K > 1, -n N too few for
// a point estimate, or a level whose interval needs more samples than -n auto ever takes.
void apply_percentiles_flag(RunConfig& config, const std::string& text);

}  // namespace ccbench
