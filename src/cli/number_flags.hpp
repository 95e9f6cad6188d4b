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

// The largest byte count a byte-size flag takes: 2^63 - 1, the largest file size and offset (off_t)
// and the largest count a result file's readers take as a signed 64-bit integer.
inline constexpr std::uint64_t kMaxFlagBytes = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

// A byte-size flag (K/M/G/T, powers of 1024): UsageError naming `flag` when the text is not a size or
// the size is above kMaxFlagBytes (8388608T is 2^63: it wrapped to 0 in products with rank counts).
inline std::uint64_t byte_flag(std::string_view flag, std::string_view text) {
  std::uint64_t v = 0;
  try {
    v = parse_bytes(text);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", flag, e.what()));
  }
  if (v > kMaxFlagBytes)
    throw UsageError(fmt::format("{}: {} is above the largest file size (2^63-1 bytes)", flag, text));
  return v;
}

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
