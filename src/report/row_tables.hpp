// Tables of row fields for the markdown and HTML reports, a line per result row that carries the
// field, in file order: the percentiles of per-iteration times (`run --percentiles`), the matrix
// ops' load (`--matrix`, `--moe`) and the sendrecv patterns' rates (`--pattern`). Internal to
// src/report.
#pragma once

#include <string>
#include <vector>

#include "core/result.hpp"

namespace ccbench::report {

struct RowTable {
  // run, op, size, place, trial, then the field's columns (p50, p99, ...; imbalance, ...).
  std::vector<std::string> header;
  std::vector<bool> numeric;                   // per column: numbers (markdown aligns them right)
  std::vector<std::vector<std::string>> rows;  // "—" where a row lacks a value
  bool empty() const { return rows.empty(); }
};

// Each level with its 95% CI: "0.857 [0.848, 0.867]", or "1.23 (no CI)".
RowTable percentile_table(const std::vector<ResultFile>& files, const std::vector<std::string>& labels);
// imbalance, most-loaded GB/s and, when some row has it, bound µs (--link-gbps).
RowTable matrix_table(const std::vector<ResultFile>& files, const std::vector<std::string>& labels);
// Rows judged against a model (`expected`): measured, band, predicted (each with its unit: GB/s or
// µs), verdict, shortfall %, basis, and the reason of a row not covered.
RowTable expected_table(const std::vector<ResultFile>& files, const std::vector<std::string>& labels);
// "3 rows against p5.json (99% band): 2 normal, 1 below" per file with `expected` rows, one line each.
std::vector<std::string> expected_summaries(const std::vector<ResultFile>& files,
                                            const std::vector<std::string>& labels);
// pattern, peer group, block, aggregate GB/s, per-receiver GB/s.
RowTable pattern_table(const std::vector<ResultFile>& files, const std::vector<std::string>& labels);

}  // namespace ccbench::report
