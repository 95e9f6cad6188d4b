#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "compare/claim.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"

namespace ccbench::compare {
namespace {

namespace fs = std::filesystem;

fs::path write_temp(const std::string& name, const std::string& text) {
  const auto dir = fs::temp_directory_path() / "ccbench-claim-tests";
  fs::create_directories(dir);
  const auto p = dir / name;
  std::ofstream(p) << text;
  return p;
}

std::string error_of(const fs::path& p) {
  try {
    load_claim_file(p);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(Claim, ParseFraction) {
  EXPECT_DOUBLE_EQ(parse_fraction_or_ratio("18%", "x"), 0.18);
  EXPECT_DOUBLE_EQ(parse_fraction_or_ratio("0.18", "x"), 0.18);
  EXPECT_NEAR(parse_fraction_or_ratio("1.18x", "x"), 0.18, 1e-12);
  EXPECT_DOUBLE_EQ(parse_fraction_or_ratio(" 5% ", "x"), 0.05);
  EXPECT_THROW(parse_fraction_or_ratio("abc", "--tolerance"), UsageError);
  EXPECT_THROW(parse_fraction_or_ratio("", "--tolerance"), UsageError);
  try {
    parse_fraction_or_ratio("18 %%", "--expect-speedup");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--expect-speedup"), std::string::npos);
  }
}

TEST(Claim, ShippedClaimFilesLoad) {
  const fs::path root = CCBENCH_SOURCE_DIR;
  const Claim v4 = load_claim_file(root / "configs/claims/efa-v4-vs-v3.yaml");
  EXPECT_NEAR(v4.expected_speedup, 0.18, 1e-12);
  EXPECT_EQ(v4.normalize, Normalize::link_bandwidth);
  EXPECT_EQ(v4.metric, Metric::busbw);
  EXPECT_EQ(v4.ops.size(), 3u);
  ASSERT_TRUE(v4.min_bytes.has_value());
  EXPECT_EQ(*v4.min_bytes, 64ull << 20);
  EXPECT_EQ(v4.candidate.at("efa_generation").front(), "v4");
  const Claim v3 = load_claim_file(root / "configs/claims/efa-v3-vs-v2-latency.yaml");
  EXPECT_EQ(v3.metric, Metric::time);
  // "35% lower latency": time_cand = 0.65 time_base -> ratio 1/0.65.
  EXPECT_NEAR(v3.expected_ratio(), 1.0 / 0.65, 1e-3);
}

TEST(Claim, TimeReductionConvertsToSpeedup) {
  const auto p = write_temp("t.yaml", "expected_time_reduction: 35%\nmetric: time\n");
  const Claim c = load_claim_file(p);
  EXPECT_NEAR(c.expected_speedup, 1.0 / 0.65 - 1.0, 1e-12);
  const auto bad = write_temp("t2.yaml", "expected_time_reduction: 35%\nexpected_speedup: 35%\n");
  EXPECT_NE(error_of(bad).find("contradicts"), std::string::npos);
}

TEST(Claim, UnknownKeyNamesFileAndLine) {
  const auto p = write_temp("u.yaml", "statement: x\nexpected_speedup: 18%\nexpected_speedpu: 1\n");
  const auto msg = error_of(p);
  EXPECT_NE(msg.find("u.yaml:3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown key 'expected_speedpu'"), std::string::npos) << msg;
}

TEST(Claim, BadValuesAreParseErrors) {
  EXPECT_NE(error_of(write_temp("a.yaml", "expected_speedup: lots\n")).find("a.yaml:1"), std::string::npos);
  EXPECT_NE(error_of(write_temp("b.yaml", "expected_speedup: 18%\nstatistic: mean\n")).find("unknown statistic"),
            std::string::npos);
  EXPECT_NE(error_of(write_temp("c.yaml", "expected_speedup: 18%\nops: [allreduce, allfoo]\n")).find("allfoo"),
            std::string::npos);
  EXPECT_NE(error_of(write_temp("d.yaml", "expected_speedup: 18%\nbaseline: {efa_gen: v3}\n")).find("efa_gen"),
            std::string::npos);
  EXPECT_NE(error_of(write_temp("e.yaml", "statement: [unclosed\n")).find("e.yaml"), std::string::npos);
  EXPECT_NE(error_of(write_temp("f.yaml", "statement: only\n")).find("missing expected_speedup"), std::string::npos);
  EXPECT_NE(error_of(write_temp("g.yaml", "- a\n- b\n")).find("must be a YAML map"), std::string::npos);
  EXPECT_NE(error_of("/nonexistent/claim.yaml").find("/nonexistent/claim.yaml: no such file"), std::string::npos);
}

}  // namespace
}  // namespace ccbench::compare
