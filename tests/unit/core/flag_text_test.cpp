// The one byte-size flag parser and the one comma splitter (core/sizes.hpp, core/comma_list.hpp),
// against hand-computed values.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/comma_list.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"

namespace ccbench {
namespace {

std::string refusal(std::string_view flag, std::string_view text, const BytesRange& range = {}) {
  try {
    bytes_flag(flag, text, range);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(BytesFlag, SuffixesArePowersOf1024) {
  EXPECT_EQ(bytes_flag("-b", "8"), 8u);
  EXPECT_EQ(bytes_flag("-b", "64K"), 65536u);                   // 64 x 1024
  EXPECT_EQ(bytes_flag("-b", "3M"), 3145728u);                  // 3 x 1024^2
  EXPECT_EQ(bytes_flag("-b", "2g"), 2147483648u);               // 2 x 1024^3
  EXPECT_EQ(bytes_flag("-b", "1T"), 1099511627776u);            // 1024^4
  EXPECT_EQ(bytes_flag("-b", "5MiB"), 5242880u);                // 5 x 1024^2
  EXPECT_EQ(bytes_flag("-b", "0"), 0u);                         // no minimum by default
  EXPECT_EQ(bytes_flag("-b", "16777215T"), 16777215ULL << 40);  // below 2^64: a plain flag takes it
}

TEST(BytesFlag, RefusalsNameTheFlag) {
  EXPECT_EQ(refusal("--lat-bytes", "1Q"),
            "--lat-bytes: invalid size '1Q' (expected a byte count such as 8, 64K, 1M or 4G)");
  EXPECT_EQ(refusal("--lat-bytes", ""),
            "--lat-bytes: invalid size '' (expected a byte count such as 8, 64K, 1M or 4G)");
  EXPECT_EQ(refusal("-e/--max-bytes", "16777216T"), "-e/--max-bytes: size '16777216T' is too large");  // 2^64
  EXPECT_EQ(refusal("-e/--max-bytes", "18446744073709551616"),
            "-e/--max-bytes: size '18446744073709551616' is too large");
}

TEST(BytesFlag, RangeBoundsAreInclusive) {
  constexpr BytesRange kAtLeastOne{.min_bytes = 1};
  EXPECT_EQ(refusal("--bw-bytes", "0", kAtLeastOne), "--bw-bytes: must be at least 1 byte");
  EXPECT_EQ(bytes_flag("--bw-bytes", "1", kAtLeastOne), 1u);
  EXPECT_EQ(refusal("--x", "4K", BytesRange{.min_bytes = 8192}), "--x: must be at least 8192 bytes");
  // kFileBytes: at most 2^63 - 1 = 9223372036854775807.
  EXPECT_EQ(bytes_flag("--shard-bytes", "9223372036854775807", kFileBytes), 9223372036854775807ULL);
  EXPECT_EQ(refusal("--shard-bytes", "8388608T", kFileBytes),  // 2^23 x 2^40 = 2^63
            "--shard-bytes: 8388608T is above the largest file size (2^63-1 bytes)");
  EXPECT_EQ(refusal("--shard-bytes", "9223372036854775808", kFileBytes),
            "--shard-bytes: 9223372036854775808 is above the largest file size (2^63-1 bytes)");
}

std::vector<std::string> items(std::string_view text) {
  std::vector<std::string> out;
  for (const std::string_view item : split_commas(text)) out.emplace_back(item);
  return out;
}

TEST(SplitCommas, EveryItemAsTyped) {
  EXPECT_EQ(items("allreduce,alltoall"), (std::vector<std::string>{"allreduce", "alltoall"}));
  EXPECT_EQ(items("one"), (std::vector<std::string>{"one"}));
  EXPECT_EQ(items(" a , b"), (std::vector<std::string>{" a ", " b"}));  // spaces are the caller's
}

TEST(SplitCommas, EmptyItemsAreKept) {
  EXPECT_EQ(items(""), (std::vector<std::string>{""}));
  EXPECT_EQ(items(","), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(items("a,,b"), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(items("a,"), (std::vector<std::string>{"a", ""}));
  EXPECT_EQ(items(",a"), (std::vector<std::string>{"", "a"}));
}

TEST(SplitCommas, ViewsPointIntoTheText) {
  const std::string text = "x,yz";
  const auto parts = split_commas(text);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].data(), text.data() + 2);
  EXPECT_EQ(parts[1].size(), 2u);
}

}  // namespace
}  // namespace ccbench
