// The nccl-tests size grammar: "8", "64K", "1M", "4G" (powers of 1024) and the sweep of sizes.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench {

// Parses a byte count with an optional K/M/G suffix (powers of 1024, case-insensitive, an optional
// trailing "B" or "iB"). Throws UsageError naming the text.
std::uint64_t parse_bytes(std::string_view text);

// The sizes a byte-size flag takes; `above_max` says what the maximum is in the refusal.
struct BytesRange {
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max();
  std::string_view above_max = "the largest size";
};

// The largest file size and offset (off_t), and the largest count a result file's readers take as a
// signed 64-bit integer: 8388608T (2^63) wrapped to 0 in products with rank counts.
inline constexpr BytesRange kFileBytes{0, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()),
                                       "the largest file size (2^63-1 bytes)"};

// A byte-size flag: parse_bytes, every refusal one UsageError naming `flag` ("FLAG: size '1Q' ...",
// "FLAG: must be at least 1 byte", "FLAG: 8388608T is above the largest file size (2^63-1 bytes)").
// The one parser of byte-size flags, so every command refuses the same text with the same words.
std::uint64_t bytes_flag(std::string_view flag, std::string_view text, const BytesRange& range = {});

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
