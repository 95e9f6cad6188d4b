#include "congestion/impact.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace ccbench::congestion {
namespace {

TEST(Impact, NoSpreadGivesTheRatioAndAPointInterval) {
  const Factor f = impact_factor({{10, 20}, {5, 10}, {8, 16}});
  EXPECT_DOUBLE_EQ(f.estimate, 2.0);
  ASSERT_TRUE(f.ci95);
  EXPECT_NEAR(f.ci95->first, 2.0, 1e-12);
  EXPECT_NEAR(f.ci95->second, 2.0, 1e-12);
  EXPECT_EQ(f.trials, 3);
}

TEST(Impact, GeometricMeanAndPairedTIntervalByHand) {
  // d = ln 2, ln 8: mean 2 ln 2 (factor 4), sd = sqrt(2) ln 2, se = ln 2, df 1, t_0.975(1) = 12.7062047.
  const Factor f = impact_factor({{1, 2}, {1, 8}});
  EXPECT_NEAR(f.estimate, 4.0, 1e-12);
  ASSERT_TRUE(f.ci95);
  EXPECT_NEAR(std::log2(f.ci95->first / 4.0), -12.7062047, 1e-6);
  EXPECT_NEAR(std::log2(f.ci95->second / 4.0), 12.7062047, 1e-6);
  ASSERT_TRUE(f.shift);
  EXPECT_NEAR(f.shift->se, std::log(2.0), 1e-12);
  EXPECT_EQ(f.shift->df, 1.0);
}

TEST(Impact, OneTrialHasNoInterval) {
  const Factor f = impact_factor({{2, 3}});
  EXPECT_DOUBLE_EQ(f.estimate, 1.5);
  EXPECT_FALSE(f.ci95);
  EXPECT_FALSE(f.shift);
}

TEST(Impact, RowPoolsSamplesForTheTableAndPairsTrialsForTheFactor) {
  std::vector<TrialPair> trials = {{0, {1, 2, 3}, {2, 4, 6}}, {1, {2, 3, 4}, {6, 9, 12}}};
  const ImpactRow r = impact_row("allreduce", 8, "incast", trials);
  EXPECT_EQ(test_name(r.op, r.bytes), "allreduce 8 B");
  EXPECT_DOUBLE_EQ(r.isolated_median_us, 2.5);   // median of 1 2 2 3 3 4
  EXPECT_DOUBLE_EQ(r.congested_median_us, 6.0);  // median of 2 4 6 6 9 12
  EXPECT_EQ(r.isolated_samples, 6u);
  // per-trial medians: 2 -> 4 (x2), 3 -> 9 (x3): geometric mean sqrt(6)
  EXPECT_NEAR(r.median.estimate, std::sqrt(6.0), 1e-12);
  // p99 needs at least 5 samples a phase (issue 23): with 3 a trial no p99 factor is computed.
  EXPECT_EQ(r.p99.estimate, 0.0);
  EXPECT_EQ(test_name("alltoall", 1 << 20), "alltoall 1M");
}

ImpactRow row_with(const std::vector<std::pair<double, double>>& per_trial) {
  ImpactRow r;
  r.op = "allreduce";
  r.bytes = 8;
  r.pattern = "incast";
  r.median = impact_factor(per_trial);
  r.p99 = impact_factor(per_trial);
  return r;
}

TEST(Gate, ClearlyAboveFails) {
  std::vector<ImpactRow> rows = {row_with({{1, 2.0}, {1, 2.1}, {1, 1.95}, {1, 2.05}})};
  const GateResult g = apply_gate(rows, 1.5);
  EXPECT_EQ(g.verdict, GateVerdict::above);
  EXPECT_EQ(g.exit_code, 1);
  EXPECT_TRUE(rows[0].median.above);
  EXPECT_EQ(g.reason,
            "2 impact factors shown above 1.5 (one-sided paired t on trials, Holm over 2 factors, alpha 0.05)");
}

TEST(Gate, ClearlyBelowPasses) {
  std::vector<ImpactRow> rows = {row_with({{1, 1.0}, {1, 1.02}, {1, 0.99}}), row_with({{1, 1.1}, {1, 1.2}})};
  const GateResult g = apply_gate(rows, 1.5);
  EXPECT_EQ(g.verdict, GateVerdict::pass);
  EXPECT_EQ(g.exit_code, 0);
  EXPECT_EQ(g.reason, "every impact factor is at most 1.5");
}

TEST(Gate, OneTrialIsUndecidable) {
  std::vector<ImpactRow> rows = {row_with({{1, 1.0}})};
  const GateResult g = apply_gate(rows, 1.5);
  EXPECT_EQ(g.verdict, GateVerdict::undecidable);
  EXPECT_EQ(g.exit_code, 4);
  EXPECT_EQ(g.reason, "2 impact factors from fewer than 2 trials (no interval); run --trials 2 or more");
}

TEST(Gate, AboveButNotShownIsUndecidable) {
  // factors 1.2 and 2.4: estimate ~1.70 > 1.5, interval from 1 df reaches far below.
  std::vector<ImpactRow> rows = {row_with({{1, 1.2}, {1, 2.4}})};
  const GateResult g = apply_gate(rows, 1.5);
  EXPECT_EQ(g.verdict, GateVerdict::undecidable);
  EXPECT_EQ(g.exit_code, 4);
  EXPECT_FALSE(rows[0].median.above);
  EXPECT_EQ(g.reason, "2 impact factors above 1.5 without the trials showing it; run more --trials");
}

TEST(Gate, HolmOverTheFamily) {
  // One-sided p of each factor against 1.5, then Holm: the smallest p times the family size.
  std::vector<ImpactRow> rows = {row_with({{1, 1.70}, {1, 1.80}, {1, 1.75}}), row_with({{1, 1.0}, {1, 1.0}})};
  apply_gate(rows, 1.5);
  ASSERT_TRUE(rows[0].median.p_gate && rows[0].median.p_holm);
  EXPECT_NEAR(*rows[0].median.p_holm, std::min(1.0, 4 * *rows[0].median.p_gate), 1e-12);
  EXPECT_EQ(*rows[1].median.p_gate, 1.0);  // no spread, below the bound
}

TEST(Table, OneLinePerTestAndPatternWithMarks) {
  std::vector<ImpactRow> rows = {row_with({{1, 2.0}, {1, 2.1}, {1, 1.95}, {1, 2.05}})};
  rows[0].isolated_median_us = 10;
  rows[0].isolated_p99_us = 12;
  rows[0].congested_median_us = 20.5;
  rows[0].congested_p99_us = 1234;
  apply_gate(rows, 1.5);
  const std::string table = render_table(rows);
  EXPECT_NE(table.find("allreduce 8 B      incast    "), std::string::npos) << table;
  EXPECT_NE(table.find("10.0 / 12.0"), std::string::npos) << table;
  EXPECT_NE(table.find("20.5 / 1234"), std::string::npos) << table;
  EXPECT_NE(table.find("2.024 ["), std::string::npos) << table;
  EXPECT_NE(table.find("]!"), std::string::npos) << table;
}

}  // namespace
}  // namespace ccbench::congestion
