// `--percentiles LIST` of run, fabric, congestion and replay: per-iteration samples (one op or one
// step a sample, the slowest rank) and the percentiles every row reports with their order-statistic
// intervals (docs/method.md "Percentiles"). The checks against -n, --batch, --timing and --steps
// live here, once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sweep/run_config.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace ccbench {

// `sample` says what one sample is for the command ("one op a sample").
CLI::Option* add_percentiles_flag(CLI::App& app, std::string& text, std::string_view sample = "one op a sample");

// After every other flag is applied: sets config.percentiles, the batch (1) and the fewest samples a
// size takes under -n auto (enough for the widest level's interval). Throws UsageError naming
// --percentiles and the flag it conflicts with: --timing nccl-tests, --batch K > 1, -n N too few for
// a point estimate, or a level whose interval needs more samples than -n auto ever takes.
void apply_percentiles_flag(RunConfig& config, const std::string& text);

// For a command whose rows hold a fixed number of samples given by another flag (replay: --steps):
// the levels, ascending. Throws UsageError naming --percentiles and `samples_flag` when `samples` is
// too few for the widest level's point estimate (below its interval's count a row has the value and
// `ci95: null`, as under -n N).
std::vector<double> percentiles_for_fixed_samples(const std::string& text, int samples, std::string_view samples_flag);

}  // namespace ccbench
