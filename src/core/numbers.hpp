// The one parser of numbers given as text (command-line flags, claim files): a finite decimal, or
// a fraction written 0.18 or 18% (and, where a speedup is meant, 1.18x). NaN, infinities, hex,
// trailing junk and empty text are rejected with UsageError naming `what` (the flag or key), so a
// malformed number can never switch a check off.
#pragma once

#include <string>
#include <string_view>

namespace ccbench {

// "0.05", "-3", "1e3" -> the value; "nan", "inf", "1e999", "0x10", "5 apples", "" -> UsageError.
double parse_finite(std::string_view text, std::string_view what);

// "0.18" or "18%" -> 0.18.
double parse_fraction(std::string_view text, std::string_view what);

// parse_fraction, and also "1.18x" -> 0.18 (a ratio written as a multiple).
double parse_fraction_or_ratio(std::string_view text, std::string_view what);

// For a CLI11 validator on a numeric flag (CLI::Validator(&finite_number_check, "NUMBER")): "" when
// `text` is a finite decimal, else the reason. CLI11's own conversion accepts nan and inf, and its
// Range check lets NaN through.
std::string finite_number_check(std::string& text);

}  // namespace ccbench
