#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/sizes.hpp"

namespace ccbench {
namespace {

TEST(ParseBytes, PlainAndSuffixesArePowersOf1024) {
  EXPECT_EQ(parse_bytes("8"), 8u);
  EXPECT_EQ(parse_bytes("1K"), 1024u);
  EXPECT_EQ(parse_bytes("64k"), 65536u);
  EXPECT_EQ(parse_bytes("1M"), 1048576u);
  EXPECT_EQ(parse_bytes("4G"), 4294967296u);
  EXPECT_EQ(parse_bytes("2MiB"), 2097152u);
  EXPECT_EQ(parse_bytes("16MB"), 16777216u);
  EXPECT_EQ(parse_bytes(" 32 "), 32u);
}

TEST(ParseBytes, RejectsGarbageWithTheText) {
  for (const char* bad : {"", "K", "1.5M", "-8", "12Q", "1MM", "abc"}) {
    try {
      parse_bytes(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_bytes("99999999999999999999G"), UsageError);
}

TEST(ParseBytes, DigitsBeyond64BitsAreTooLargeNotInvalid) {
  EXPECT_EQ(parse_bytes("18446744073709551615"), 18446744073709551615ULL);
  for (const char* big : {"18446744073709551616", "99999999999999999999G", "16777216T"}) {
    try {
      parse_bytes(big);
      FAIL() << "accepted '" << big << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("size '") + big + "' is too large");
    }
  }
}

TEST(FormatBytes, ShortestExactSuffix) {
  EXPECT_EQ(format_bytes(8), "8");
  EXPECT_EQ(format_bytes(1024), "1K");
  EXPECT_EQ(format_bytes(1536), "1536");
  EXPECT_EQ(format_bytes(64ULL << 20), "64M");
  EXPECT_EQ(format_bytes(1ULL << 30), "1G");
}

TEST(ExpandSizes, GeometricLikeNcclTests) {
  EXPECT_EQ(expand_sizes({8, 64, 2.0, 0}), (std::vector<std::uint64_t>{8, 16, 32, 64}));
  EXPECT_EQ(expand_sizes({8, 100, 4.0, 0}), (std::vector<std::uint64_t>{8, 32}));
  EXPECT_EQ(expand_sizes({1024, 1024, 2.0, 0}), (std::vector<std::uint64_t>{1024}));
  // 8 B..64 MiB, factor 2: the quick sweep's 24 sizes.
  EXPECT_EQ(expand_sizes({8, 64ULL << 20, 2.0, 0}).size(), 24u);
}

TEST(ExpandSizes, ArithmeticStepWinsOverFactor) {
  EXPECT_EQ(expand_sizes({1024, 4096, 2.0, 1024}), (std::vector<std::uint64_t>{1024, 2048, 3072, 4096}));
}

TEST(ExpandSizes, BadRangesAreUsageErrors) {
  EXPECT_THROW(expand_sizes({64, 8, 2.0, 0}), UsageError);
  EXPECT_THROW(expand_sizes({8, 64, 1.0, 0}), UsageError);
  EXPECT_THROW(expand_sizes({1, 1ULL << 40, 1.0, 1}), UsageError);  // more than 10,000 sizes
}

}  // namespace
}  // namespace ccbench
