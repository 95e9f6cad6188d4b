// The one parser of numbers given as text (core/numbers.hpp): every numeric flag goes through it.
#include "core/numbers.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace ccbench {
namespace {

std::string error_of(double (*parse)(std::string_view, std::string_view), const char* text, const char* what) {
  try {
    parse(text, what);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Numbers, FiniteDecimals) {
  EXPECT_DOUBLE_EQ(parse_finite("0.05", "--alpha"), 0.05);
  EXPECT_DOUBLE_EQ(parse_finite(" 300 ", "-T"), 300.0);
  EXPECT_DOUBLE_EQ(parse_finite("-2.5e3", "x"), -2500.0);
  for (const char* bad :
       {"nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e999", "0x10", "5s", "", " ", "1,5", "--1"}) {
    EXPECT_EQ(error_of(&parse_finite, bad, "--alpha"), std::string("--alpha: '") + bad + "' is not a finite number")
        << bad;
  }
}

TEST(Numbers, FractionsAndPercentages) {
  EXPECT_DOUBLE_EQ(parse_fraction("0.01", "--target-ci"), 0.01);
  EXPECT_DOUBLE_EQ(parse_fraction("1%", "--target-ci"), 0.01);
  EXPECT_DOUBLE_EQ(parse_fraction(" 5% ", "--threshold"), 0.05);
  EXPECT_EQ(error_of(&parse_fraction, "1.18x", "--target-ci"),
            "--target-ci: '1.18x' is not a fraction (write 1% or 0.01)");
  EXPECT_NEAR(parse_fraction_or_ratio("1.18x", "--expect-speedup"), 0.18, 1e-12);
  EXPECT_DOUBLE_EQ(parse_fraction_or_ratio("18%", "--expect-speedup"), 0.18);
  for (const char* bad : {"nan", "nan%", "inf", "infx", "-inf%", "1e999", "%", "x", "18 %%"}) {
    EXPECT_EQ(error_of(&parse_fraction_or_ratio, bad, "--tolerance"),
              std::string("--tolerance: '") + bad + "' is not a fraction (write 18%, 0.18 or 1.18x)")
        << bad;
  }
}

TEST(Numbers, Cli11Check) {
  std::string ok = "0.05", nan = "nan";
  EXPECT_EQ(finite_number_check(ok), "");
  EXPECT_EQ(finite_number_check(nan), "'nan' is not a finite number");
}

}  // namespace
}  // namespace ccbench
