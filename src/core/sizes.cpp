#include "core/sizes.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace ccbench {

std::uint64_t parse_bytes(std::string_view text) {
  const std::string original(text);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  auto ends_with_ci = [&](std::string_view suffix) {
    if (text.size() < suffix.size()) return false;
    for (std::size_t i = 0; i < suffix.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(text[text.size() - suffix.size() + i])) != suffix[i]) return false;
    }
    return true;
  };
  if (ends_with_ci("ib")) {
    text.remove_suffix(2);
  } else if (text.size() > 1 && ends_with_ci("b") &&
             std::isalpha(static_cast<unsigned char>(text[text.size() - 2]))) {
    text.remove_suffix(1);
  }
  std::uint64_t multiplier = 1;
  if (!text.empty()) {
    switch (std::tolower(static_cast<unsigned char>(text.back()))) {
      case 'k': multiplier = 1ULL << 10; break;
      case 'm': multiplier = 1ULL << 20; break;
      case 'g': multiplier = 1ULL << 30; break;
      case 't': multiplier = 1ULL << 40; break;
      default: break;
    }
    if (multiplier != 1) text.remove_suffix(1);
  }
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // Digits beyond 2^64 - 1 are a size too large, not a malformed one.
  if (ec == std::errc::result_out_of_range && ptr == text.data() + text.size()) {
    throw UsageError("size '" + original + "' is too large");
  }
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    throw UsageError("invalid size '" + original + "' (expected a byte count such as 8, 64K, 1M or 4G)");
  }
  if (value > std::numeric_limits<std::uint64_t>::max() / multiplier) {
    throw UsageError("size '" + original + "' is too large");
  }
  return value * multiplier;
}

std::uint64_t bytes_flag(std::string_view flag, std::string_view text, const BytesRange& range) {
  std::uint64_t bytes = 0;
  try {
    bytes = parse_bytes(text);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", flag, e.what()));
  }
  if (bytes < range.min_bytes)
    throw UsageError(
        fmt::format("{}: must be at least {} byte{}", flag, range.min_bytes, range.min_bytes == 1 ? "" : "s"));
  if (bytes > range.max_bytes) throw UsageError(fmt::format("{}: {} is above {}", flag, text, range.above_max));
  return bytes;
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* kSuffix[] = {"", "K", "M", "G", "T"};
  int unit = 0;
  while (unit < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + kSuffix[unit];
}

std::vector<std::uint64_t> expand_sizes(const SizeRange& range) {
  if (range.min_bytes > range.max_bytes) {
    throw UsageError("--min-bytes (" + std::to_string(range.min_bytes) + ") is larger than --max-bytes (" +
                     std::to_string(range.max_bytes) + ")");
  }
  if (range.step_bytes == 0 && !(range.step_factor > 1.0)) {
    if (range.min_bytes == range.max_bytes) return {range.min_bytes};
    throw UsageError("--step-factor must be greater than 1 (or give --step-bytes)");
  }
  constexpr std::size_t kMaxSizes = 10000;
  std::vector<std::uint64_t> sizes;
  std::uint64_t size = range.min_bytes;
  while (size <= range.max_bytes) {
    sizes.push_back(size);
    if (sizes.size() > kMaxSizes) throw UsageError("the size sweep has more than 10000 sizes; use a larger step");
    std::uint64_t next = 0;
    if (range.step_bytes != 0) {
      next = size + range.step_bytes;
    } else {
      const double scaled = std::floor(static_cast<double>(size) * range.step_factor);
      next = scaled >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(scaled);
      if (next <= size) next = size + 1;  // a factor close to 1 still makes progress on tiny sizes
    }
    if (next < size) break;  // overflow
    size = next;
  }
  return sizes;
}

}  // namespace ccbench
