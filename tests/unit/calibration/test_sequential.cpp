// Asking again (issue 28 item 2): a team adds a launch a side and runs compare again, from 5 to 20
// launches a side, stopping at the first confirmed or refuted verdict. Under the sequential rule
// (the default) the wrong verdicts must stay within what one look promises: refuted at the band's
// edge <= 2.5% (the 95% interval's side), confirmed there <= 5% (the 90% interval's side); the
// single-look rule asked this way exceeds them. Assertions as in
// test_calibration.cpp: a bound fails only when the counts exclude the promised rate at 99.9% (one-sided
// Clopper-Pearson); seeds are fixed, so the outcome is deterministic. The long run is `decisive_bench looks`.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "compare/compare.hpp"
#include "compare/sequential.hpp"
#include "harness.hpp"

namespace ccbench::calibration {
namespace {

using compare::Looks;
using compare::Statistic;

constexpr double kEvidence = 0.999;

// 6 rows (allreduce at 6 sizes) of 10 samples keep one comparison near a millisecond: the rule is
// about launches, and the geomean's verdict does not use the max's resampling, so none is drawn.
AskedCounts ask_at(double ratio, Looks looks, int pairs, std::uint64_t seed) {
  NoiseModel base;
  base.ops = {"allreduce"};
  base.samples = 10;
  NoiseModel cand = base;
  cand.ratio = [ratio](const std::string&, std::size_t) { return ratio; };
  compare::CompareOptions o;
  o.claim = claim_18(Statistic::geomean);
  o.looks = looks;
  o.resamples = 0;
  return run_asked(base, cand, o, pairs, seed, ratio, 5, compare::kLastLook);
}

// The single-look rule asked this way on these fleets (--looks once) fails both bounds: 24 confirmed
// and 15 refuted of 160. 80 fleets an edge keep the test to about 7 s of CPU.
TEST(Sequential, AskingAgainAtTheBandsEdgesKeepsOneLooksErrorRates) {
  int confirmed = 0, refuted = 0, runs = 0;
  for (const double edge : {1.13, 1.23}) {
    const auto a = ask_at(edge, Looks::sequential, 80, 91);
    confirmed += a.wrong_confirmed;
    refuted += a.wrong_refuted;
    runs += a.runs;
  }
  EXPECT_LE(binomial_lower(confirmed, runs, kEvidence), 0.05) << confirmed << " confirmed at the edges of " << runs;
  EXPECT_LE(binomial_lower(refuted, runs, kEvidence), 0.025) << refuted << " refuted at the edges of " << runs;
}

TEST(Sequential, DecidesFastInsideAndOutsideTheBand) {
  // Median launches a side to a decision <= 7 at a true 1.10 (refuted), 1.18 (confirmed) and 1.25
  // (refuted), and never the wrong verdict there.
  for (const double ratio : {1.10, 1.18, 1.25}) {
    const auto a = ask_at(ratio, Looks::sequential, 20, 92);
    EXPECT_LE(a.median_launches, 7.0) << ratio;
    EXPECT_EQ(a.wrong_confirmed + a.wrong_refuted, 0) << ratio;
  }
}

TEST(Sequential, OneLookRuleIsTheIdentityAndSequentialLevelsAreFixedByTheDesign) {
  const auto once = compare::look_rule(Looks::once, 5, 7);
  EXPECT_EQ(once.per_look(0.025), 0.025);
  EXPECT_EQ(once.p_value(0.003), 0.003);
  // Looks 5..20, shape 3/4: the first look's level for 2.5% one-sided is 0.013752 (SciPy checks the
  // table in compare.sequential_vs_scipy); the boundary rises as n^(1/4) after it.
  const auto first = compare::look_rule(Looks::sequential, 5, 5);
  EXPECT_NEAR(first.per_look(0.025), 0.013752, 1e-7);
  const auto later = compare::look_rule(Looks::sequential, 5, 10);
  EXPECT_LT(later.per_look(0.025), first.per_look(0.025));
  EXPECT_NEAR(later.p_value(later.per_look(0.05)), 0.05, 1e-9);
  // Past the last look the boundary is held; a first look outside the table is clamped
  // (--min-trials 10 uses the 5 row, conservative; --min-trials 1 the 2 row).
  EXPECT_EQ(compare::look_rule(Looks::sequential, 5, 40).per_look(0.025),
            compare::look_rule(Looks::sequential, 5, 20).per_look(0.025));
  EXPECT_EQ(compare::look_rule(Looks::sequential, 10, 10).first_look, 5);
  EXPECT_EQ(compare::look_rule(Looks::sequential, 1, 1).first_look, 2);
  // p-values stay p-values: never below the per-look one, never above 1.
  EXPECT_EQ(later.p_value(1.0), 1.0);
  EXPECT_EQ(later.p_value(0.0), 0.0);
  EXPECT_GE(later.p_value(0.3), 0.3);
  EXPECT_LE(later.p_value(0.3), 1.0);
}

}  // namespace
}  // namespace ccbench::calibration
