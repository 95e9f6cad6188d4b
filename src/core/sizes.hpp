// The nccl-tests size grammar: "8", "64K", "1M", "4G" (powers of 1024) and the sweep of sizes.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace ccbench {

// Parses a byte count with an optional K/M/G suffix (powers of 1024, case-insensitive, an optional
// trailing "B" or "iB"). Throws UsageError naming the text.
std::uint64_t parse_bytes(std::string_view text);

// Formats bytes the way users type them: 1024 -> "1K", 1536 -> "1536".
std::string format_bytes(std::uint64_t bytes);

struct SizeRange {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 64ULL << 20;
  double step_factor = 2.0;         // -f: geometric step (used when step_bytes == 0)
  std::uint64_t step_bytes = 0;     // -i: arithmetic step, wins over the factor when non-zero
};

// Sizes from min to max inclusive; throws UsageError for min > max, factor <= 1 without a step, or
// a sweep of more than 10,000 sizes.
std::vector<std::uint64_t> expand_sizes(const SizeRange& range);

}  // namespace ccbench
