// The percentiles of per-iteration times (`run --percentiles`) as one table for the markdown and
// HTML reports: a line per row that carries them, a cell per level with its 95% CI. Internal to
// src/report.
#pragma once

#include <string>
#include <vector>

#include "core/result.hpp"

namespace ccbench::report {

struct PercentileTable {
  std::vector<std::string> header;             // run, op, size, place, trial, then p50, p99, ...
  std::vector<std::vector<std::string>> rows;  // "0.857 [0.848, 0.867]", "1.23 (no CI)", or "—"
  bool empty() const { return rows.empty(); }
};

// Every row of `files` that carries percentiles_us, in file order; `labels` names each file.
PercentileTable percentile_table(const std::vector<ResultFile>& files, const std::vector<std::string>& labels);

}  // namespace ccbench::report
