// Numeric flags: every floating-point flag of every command takes this check, so nan, inf and
// out-of-range numbers are exit 2 naming the flag (CLI11 alone parses "nan" and "inf", and its
// Range check lets NaN through).
#pragma once

#include <CLI/CLI.hpp>

#include "core/numbers.hpp"

namespace ccbench::cli {

inline CLI::Validator finite_number() { return CLI::Validator(&finite_number_check, "NUMBER"); }

}  // namespace ccbench::cli
