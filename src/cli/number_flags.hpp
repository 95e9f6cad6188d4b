// Numeric flags: every floating-point flag of every command takes this check, so nan, inf and
// out-of-range numbers are exit 2 naming the flag (CLI11 alone parses "nan" and "inf", and its
// Range check lets NaN through).
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>
#include <string_view>

#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/sizes.hpp"

namespace ccbench::cli {

inline CLI::Validator finite_number() { return CLI::Validator(&finite_number_check, "NUMBER"); }

// A finite number within [min, max] (above min when !min_allowed), the range said in the message:
// CLI11's own PositiveNumber and Range say "must be positive" for 1e308 (which overflowed later) and
// print DBL_MAX as 309 digits for -1.
inline CLI::Validator number_in(double min, double max, bool min_allowed = true) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        if (std::string why = finite_number_check(text); !why.empty()) return why;
        const double v = parse_finite(text, "");
        if (v < min || (!min_allowed && v == min) || v > max)
          return fmt::format("{} is out of range (must be {} {:g} and at most {:g})", text,
                             min_allowed ? "at least" : "above", min, max);
        return std::string();
      },
      "NUMBER");
}

}  // namespace ccbench::cli
