// The nccl-tests-style text table users know, with the CI each row reached. Used live by
// `ccbench run` on rank 0 and by `ccbench report --format table`.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"

namespace ccbench::report {

// The column sets a collective table adds after nccl-tests' columns, each out-of-place then
// in-place, in this order. With none of them on, the table is the one nccl-tests users know.
struct TableColumns {
  bool groups = false;              // --groups: the aggregate busbw of all groups
  std::vector<double> percentiles;  // --percentiles (levels in percent): each level's time and CI
  bool matrix = false;              // matrix ops (--matrix, --moe): imbalance, most loaded rank's GB/s
  bool matrix_bound = false;        // ... and its bound at the link rate (--link-gbps)
  bool sendrecv_pattern = false;    // sendrecv --pattern/--block-bytes: aggregate, per-receiver GB/s
  // Rows judged against a model (`expected`: model check -o, run --expect): the verdict and the
  // shortfall, "below +23.4%" (docs/report.md).
  bool expected = false;
  // Turns on the sets the row's fields call for (matrix, sendrecv_pattern, expected): a table read
  // back from a file shows what its rows hold.
  void include(const ResultRow& row);
};
// Title line and the three header lines, for one op (and trial when there are several).
std::string table_header(const std::string& op, int trial, int trials, const TableColumns& columns = {});
// One line per size: the out-of-place and in-place results side by side (either may be null).
std::string table_row(const ResultRow* out_of_place, const ResultRow* in_place, const TableColumns& columns = {});
// The levels (in percent, ascending) of the rows' `percentiles_us`, empty when none has them.
std::vector<double> percentile_levels(std::span<const ResultRow> rows);
// ... and of every row of every file.
std::vector<double> percentile_levels(std::span<const ResultFile> files);
// One level of a row's `percentiles_us` (docs/result-format.md): its value and 95% CI in us; nullopt
// when the row does not carry the level, no CI when the row had too few samples for one.
struct PercentileValue {
  double value_us = 0;
  std::optional<std::pair<double, double>> ci95_us;
};
std::optional<PercentileValue> percentile_value(const ResultRow& row, double percent);
// The level columns of a table (replay's and fabric's too): per level a time and a CI column,
// `variants` times over (2: out-of-place then in-place); `units` the unit line instead of the names.
std::string percentile_header(std::span<const double> percentiles, bool units, int variants);
// One row's level columns: the value and the relative half-width of its interval ("-" when the row
// has none, or `row` is null).
std::string percentile_columns(const ResultRow* row, std::span<const double> percentiles);
// Point-to-point transport tests (`ccbench fabric`: pingpong, bw, bibw, write, read) have no count,
// type, redop, root or in-place half: their own table of size, time per message, bandwidth,
// message rate and CI.
// `percentiles` (a --percentiles run) adds each level's time and CI, as table_header's one variant.
std::string p2p_table_header(const std::string& op, int trial, int trials, std::span<const double> percentiles = {});
std::string p2p_table_row(const ResultRow& row, std::span<const double> percentiles = {});
// Relative half-width of the median's 95% CI, in percent; NaN when the row has none (an imported
// row holds its tool's summary numbers, ci95 null): printed as "-", never as a perfect 0.0.
double ci_percent(const ResultRow& row);
// Whether the row holds a confidence interval of its median.
bool has_ci95(const ResultRow& row);

}  // namespace ccbench::report
