#include "core/numbers.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace ccbench {

namespace {

std::string_view trim(std::string_view t) {
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  return t;
}

// A finite decimal number and nothing else (std::from_chars alone would accept "nan", "inf" and
// "infinity"; out-of-range values such as 1e999 fail).
bool decimal(std::string_view t, double& out) {
  if (t.empty()) return false;
  for (char c : t) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
      return false;
    }
  }
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  return ec == std::errc() && ptr == t.data() + t.size() && std::isfinite(out);
}

double fraction(std::string_view text, std::string_view what, bool ratio) {
  std::string_view t = trim(text);
  double scale = 1.0, offset = 0.0;
  if (!t.empty() && t.back() == '%') {
    scale = 0.01;
    t.remove_suffix(1);
  } else if (ratio && !t.empty() && (t.back() == 'x' || t.back() == 'X')) {
    offset = -1.0;
    t.remove_suffix(1);
  }
  double v = 0;
  if (!decimal(t, v)) {
    throw UsageError(
        fmt::format("{}: '{}' is not a fraction (write {})", what, text, ratio ? "18%, 0.18 or 1.18x" : "1% or 0.01"));
  }
  return v * scale + offset;
}

}  // namespace

double parse_finite(std::string_view text, std::string_view what) {
  double v = 0;
  if (!decimal(trim(text), v)) throw UsageError(fmt::format("{}: '{}' is not a finite number", what, text));
  return v;
}

std::string finite_number_check(std::string& text) {
  double v = 0;
  return decimal(trim(text), v) ? std::string() : fmt::format("'{}' is not a finite number", text);
}

double parse_fraction(std::string_view text, std::string_view what) { return fraction(text, what, false); }

double parse_fraction_or_ratio(std::string_view text, std::string_view what) { return fraction(text, what, true); }

}  // namespace ccbench
