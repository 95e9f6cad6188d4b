// The nccl-tests-style text table users know, with the CI each row reached. Used live by
// `ccbench run` on rank 0 and by `ccbench report --format table`.
#pragma once

#include <string>

#include "core/result.hpp"

namespace ccbench::report {

// Title line and the three header lines, for one op (and trial when there are several). `groups`
// (a --groups run) adds the aggregate busbw of all groups, out-of-place and in-place, at the end.
std::string table_header(const std::string& op, int trial, int trials, bool groups = false);
// One line per size: the out-of-place and in-place results side by side (either may be null).
std::string table_row(const ResultRow* out_of_place, const ResultRow* in_place, bool groups = false);
// Relative half-width of the median's 95% CI, in percent (0 when unknown).
double ci_percent(const ResultRow& row);

}  // namespace ccbench::report
