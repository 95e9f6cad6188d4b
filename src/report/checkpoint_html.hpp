// The HTML report's checkpoint section (`ccbench checkpoint` result files, docs/checkpoint.md):
// throughput per trial for every run and phase, the phases of every rank in each run's last write
// and read (open, I/O, fsync, close, then the commit), and the numbers behind them.
#pragma once

#include <string>
#include <vector>

#include "core/result.hpp"

namespace ccbench::report {

// True for the ops of `ccbench checkpoint` (drawn by this section, not as size sweeps).
bool is_checkpoint_op(const std::string& op);

// "" when no file has checkpoint rows. `labels` name the files, in the same order.
std::string checkpoint_html_section(const std::vector<ResultFile>& files, const std::vector<std::string>& labels);

}  // namespace ccbench::report
