#include <gtest/gtest.h>

#include <cmath>

#include "compare/compare.hpp"
#include "compare/render.hpp"
#include "core/error.hpp"
#include "generate.hpp"

namespace ccbench::compare {
namespace {

using testing::make_side;
using testing::RunModel;

Claim claim_18(Statistic statistic = Statistic::geomean, Normalize normalize = Normalize::none) {
  Claim c;
  c.statement = "up to 18% faster";
  c.expected_speedup = 0.18;
  c.tolerance = 0.05;
  c.statistic = statistic;
  c.normalize = normalize;
  return c;
}

CompareOptions with_claim(const Claim& c) {
  CompareOptions o;
  o.claim = c;
  o.resamples = 2000;
  return o;
}

RunModel model(double ratio, std::uint64_t seed, int trials = 6) {
  RunModel m;
  m.ratio = [ratio](const std::string&, std::uint64_t) { return ratio; };
  m.seed = seed;
  m.trials = trials;
  return m;
}

TEST(Verdict, RatioEqualToClaimIsConfirmed) {
  for (auto statistic : {Statistic::geomean, Statistic::max}) {
    const auto b = make_side("baseline", model(1.0, 1));
    const auto c = make_side("candidate", model(1.18, 2));
    const auto r = compare_sides(b, c, with_claim(claim_18(statistic)));
    EXPECT_EQ(r.verdict, Verdict::confirmed) << r.reason;
    EXPECT_EQ(exit_code(r.verdict), 0);
    EXPECT_NEAR(r.summary.used().ratio, 1.18, 0.02);
    ASSERT_TRUE(r.summary.used().ci90.has_value());
    EXPECT_EQ(r.rows.size(), 18u);
    EXPECT_EQ(r.rows[0].unit, Unit::trials);
  }
}

TEST(Verdict, FarFromClaimIsRefutedAboveOrBelow) {
  const auto b = make_side("baseline", model(1.0, 1));
  const auto fast = compare_sides(b, make_side("candidate", model(1.5, 2)), with_claim(claim_18()));
  EXPECT_EQ(fast.verdict, Verdict::refuted);
  EXPECT_EQ(exit_code(fast.verdict), 1);
  EXPECT_NE(fast.reason.find("above"), std::string::npos) << fast.reason;
  const auto same = compare_sides(b, make_side("candidate", model(1.0, 3)), with_claim(claim_18()));
  EXPECT_EQ(same.verdict, Verdict::refuted);
  EXPECT_NE(same.reason.find("below"), std::string::npos) << same.reason;
}

TEST(Verdict, TooFewTrialsIsInconclusiveWithTrialsNeeded) {
  const auto b = make_side("baseline", model(1.0, 1, 2));
  const auto c = make_side("candidate", model(1.18, 2, 2));
  const auto r = compare_sides(b, c, with_claim(claim_18()));
  EXPECT_EQ(r.verdict, Verdict::inconclusive);
  EXPECT_EQ(exit_code(r.verdict), 4);
  ASSERT_TRUE(r.trials_needed.has_value());
  EXPECT_GE(*r.trials_needed, 5);
  EXPECT_EQ(r.rows[0].unit, Unit::samples);
  bool warned = false;
  // Separate launches are offered, not `run --trials`, whose trials share one launch (issue 28 item 1).
  for (const auto& w : r.warnings)
    warned = warned || w.find("separate launches (scripts/launches.sh 5 DIR)") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(Verdict, NoisyRunsOnTheBandEdgeAreInconclusive) {
  RunModel mb = model(1.0, 1, 5), mc = model(1.23, 2, 5);
  mb.trial_sigma = mc.trial_sigma = 0.04;
  const auto r = compare_sides(make_side("baseline", mb), make_side("candidate", mc), with_claim(claim_18()));
  EXPECT_EQ(r.verdict, Verdict::inconclusive) << r.reason;
  ASSERT_TRUE(r.trials_needed.has_value());
  EXPECT_GT(*r.trials_needed, 5);
}

TEST(Gate, RunComparedWithItselfPasses) {
  const auto a = make_side("baseline", model(1.0, 1));
  CompareOptions o;
  o.gate = Gate{};
  o.resamples = 1000;
  const auto r = compare_sides(a, a, o);
  EXPECT_EQ(r.verdict, Verdict::pass);
  EXPECT_EQ(exit_code(r.verdict), 0);
  for (const auto& row : r.rows) EXPECT_DOUBLE_EQ(row.ratio, 1.0);
  // Single-trial runs: launch-to-launch variation is unknown, so the gate cannot test (samples of one
  // launch are not independent of it): inconclusive, with the trials that would decide.
  const auto one = make_side("baseline", model(1.0, 4, 1));
  const auto single = compare_sides(one, one, o);
  EXPECT_EQ(single.verdict, Verdict::inconclusive) << single.reason;
  EXPECT_EQ(exit_code(single.verdict), 4);
  ASSERT_TRUE(single.trials_needed.has_value());
  EXPECT_EQ(*single.trials_needed, 5);
  EXPECT_NE(single.reason.find("one trial (launch) on each side"), std::string::npos) << single.reason;
}

TEST(Gate, TenPercentSlowdownOnSomeSizesIsARegressionNamingThem) {
  RunModel slow = model(1.0, 2);
  slow.ratio = [](const std::string& op, std::uint64_t b) {
    return op == "allreduce" && (b == (64u << 20) || b == (256u << 20)) ? 1.0 / 1.10 : 1.0;
  };
  CompareOptions o;
  o.gate = Gate{0.05, 0.05};
  o.resamples = 1000;
  const auto r = compare_sides(make_side("baseline", model(1.0, 1)), make_side("candidate", slow), o);
  EXPECT_EQ(r.verdict, Verdict::regression);
  EXPECT_EQ(exit_code(r.verdict), 1);
  ASSERT_EQ(r.gate_failures.size(), 2u) << r.reason;
  EXPECT_NE(r.gate_failures[0].find("allreduce 64M"), std::string::npos) << r.gate_failures[0];
  EXPECT_NE(r.gate_failures[1].find("allreduce 256M"), std::string::npos) << r.gate_failures[1];
  EXPECT_FALSE(r.geomean_regression);
  // A 3% slowdown is significant but under the 5% threshold.
  RunModel small = model(1.0, 2);
  small.ratio = [](const std::string&, std::uint64_t) { return 1.0 / 1.03; };
  EXPECT_EQ(compare_sides(make_side("baseline", model(1.0, 1)), make_side("candidate", small), o).verdict,
            Verdict::pass);
  // An across-the-board 10% slowdown also fails the geomean.
  const auto all = compare_sides(make_side("baseline", model(1.0, 1)), make_side("candidate", model(1.0 / 1.1, 2)), o);
  EXPECT_TRUE(all.geomean_regression);
}

// With 5 trials an exact Mann-Whitney on trial medians cannot go below p = 2/252, which Holm over
// 18 sizes never accepts; the gate's Welch test on log trial medians still finds the slowdown.
TEST(Gate, FiveTrialsStillCatchARegression) {
  RunModel slow = model(1.0, 2, 5);
  slow.ratio = [](const std::string& op, std::uint64_t b) {
    return op == "alltoall" && b >= (256u << 20) ? 1.0 / 1.10 : 1.0;
  };
  CompareOptions o;
  o.gate = Gate{0.05, 0.05};
  o.resamples = 1000;
  const auto r = compare_sides(make_side("baseline", model(1.0, 1, 5)), make_side("candidate", slow), o);
  EXPECT_EQ(r.verdict, Verdict::regression);
  ASSERT_EQ(r.gate_failures.size(), 2u) << r.reason;
  EXPECT_EQ(r.rows[0].gate_test, GateTest::welch_t);
}

// The gate's false-positive rate over A/A pairs of noisy data stays near its alpha. With threshold
// 0 the gate is a pure Holm-Bonferroni test whose family-wise error rate is at most alpha; across
// 200 independent pairs, Binomial(200, 0.05) exceeds 20 (2 alpha) with probability < 0.2%.
void expect_false_positive_rate(int trials, double trial_sigma, int samples) {
  int failures = 0;
  const int pairs = 200;
  CompareOptions o;
  o.gate = Gate{0.0, 0.05};
  o.resamples = 100;
  for (int i = 0; i < pairs; ++i) {
    RunModel m = model(1.0, 1000 + 2 * static_cast<std::uint64_t>(i), trials);
    m.sizes = {1 << 20, 16 << 20, 256 << 20};
    m.samples = samples;
    m.trial_sigma = trial_sigma;
    m.sigma = 0.03;
    RunModel n = m;
    n.seed += 1;
    const auto r = compare_sides(make_side("baseline", m), make_side("candidate", n), o);
    failures += r.verdict == Verdict::regression ? 1 : 0;
  }
  EXPECT_LE(failures, 20) << "false-positive rate " << failures / 200.0;
}

TEST(Gate, FalsePositiveRateNearAlphaWithTrials) { expect_false_positive_rate(5, 0.02, 20); }

TEST(Gate, FalsePositiveRateNearAlphaWithThreeTrials) { expect_false_positive_rate(3, 0.02, 30); }

TEST(Normalization, TwiceTheLinkDoesNotConfirmAGenerationClaim) {
  RunModel base = model(1.0, 1);
  RunModel cand = model(2.0, 2);  // p6-b300: 2x the bandwidth, same per-link speed
  cand.instance_type = "p6-b300.48xlarge";
  cand.generation = "v4";
  cand.link_gbps = 6400;
  const auto b = make_side("baseline", base), c = make_side("candidate", cand);
  const auto r = compare_sides(b, c, with_claim(claim_18(Statistic::max, Normalize::link_bandwidth)));
  EXPECT_NE(r.verdict, Verdict::confirmed);
  EXPECT_EQ(r.verdict, Verdict::refuted);
  EXPECT_NEAR(r.summary.used().ratio * r.summary.normalization, 1.0, 0.03);
  EXPECT_NEAR(r.summary.used().ratio, 2.0, 0.05);  // raw
  const auto j = compare::compare_to_json(r);
  EXPECT_NEAR(j["summary"]["raw"]["ratio"].get<double>(), 2.0, 0.05);
  EXPECT_NEAR(j["summary"]["normalized"]["ratio"].get<double>(), 1.0, 0.03);
  EXPECT_NEAR(j["summary"]["ratio"].get<double>(), 1.0, 0.03);
  EXPECT_NEAR(j["rows"][0]["ratio_raw"].get<double>(), 2.0, 0.1);
  // A p6-b300 that is 18% faster per unit of link bandwidth confirms it.
  RunModel better = cand;
  better.ratio = [](const std::string&, std::uint64_t) { return 2.0 * 1.18; };
  const auto ok = compare_sides(b, make_side("candidate", better),
                                with_claim(claim_18(Statistic::geomean, Normalize::link_bandwidth)));
  EXPECT_EQ(ok.verdict, Verdict::confirmed) << ok.reason;
}

TEST(Normalization, MissingLinkBandwidthIsInconclusive) {
  RunModel cand = model(1.18, 2);
  cand.link_gbps.reset();
  const auto r = compare_sides(make_side("baseline", model(1.0, 1)), make_side("candidate", cand),
                               with_claim(claim_18(Statistic::geomean, Normalize::link_bandwidth)));
  EXPECT_EQ(r.verdict, Verdict::inconclusive);
  EXPECT_EQ(exit_code(r.verdict), 4);
  bool warned = false;
  for (const auto& w : r.warnings)
    warned = warned || w.find("link_gbps is missing on the candidate") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(Metadata, MustMatchKeysGiveNotComparableUnlessAllowed) {
  RunModel cand = model(1.0, 2);
  cand.ranks_per_node = 4;
  cand.timing = "nccl-tests";
  const auto b = make_side("baseline", model(1.0, 1)), c = make_side("candidate", cand);
  CompareOptions o;
  o.resamples = 100;
  const auto r = compare_sides(b, c, o);
  EXPECT_EQ(r.verdict, Verdict::not_comparable);
  EXPECT_EQ(exit_code(r.verdict), 3);
  EXPECT_EQ(r.mismatches, (std::vector<std::string>{"ranks_per_node", "timing"}));
  EXPECT_NE(r.reason.find("--allow-mismatch ranks_per_node"), std::string::npos);
  o.allow_mismatch = {"ranks_per_node", "timing"};
  const auto allowed = compare_sides(b, c, o);
  EXPECT_EQ(exit_code(allowed.verdict), 0);
  o.allow_mismatch = {"colour"};
  EXPECT_THROW(compare_sides(b, c, o), UsageError);
}

// Concurrent groups (run --groups): rows of two groups of N ranks are not those of N ranks alone,
// though `ranks` (the group's size) matches; rows without the field are "none".
TEST(Metadata, GroupedRowsAreNotComparableWithLoneOnes) {
  auto c = make_side("candidate", model(1.0, 2));
  for (auto& f : c.files)
    for (auto& row : f.results) row.extra["groups"] = {{"spec", "mod:2"}, {"count", 2}};
  const auto b = make_side("baseline", model(1.0, 1));
  CompareOptions o;
  o.resamples = 100;
  const auto r = compare_sides(b, c, o);
  EXPECT_EQ(r.verdict, Verdict::not_comparable);
  EXPECT_EQ(r.mismatches, (std::vector<std::string>{"groups"}));
  EXPECT_NE(r.reason.find("groups differs (none vs mod:2"), std::string::npos) << r.reason;
  o.allow_mismatch = {"groups"};
  EXPECT_NE(compare_sides(b, c, o).verdict, Verdict::not_comparable);
  // The same grouping on both sides compares.
  auto b2 = make_side("baseline", model(1.0, 1));
  for (auto& f : b2.files)
    for (auto& row : f.results) row.extra["groups"] = {{"spec", "mod:2"}, {"count", 2}};
  o.allow_mismatch = {};
  EXPECT_NE(compare_sides(b2, c, o).verdict, Verdict::not_comparable);
}

// run -R (NCCL buffer registration) changes which algorithms NCCL runs: a registered or window run
// is never set against a plain one; a file without config.registration (before -R, imports) is "none".
TEST(Metadata, RegistrationModesAreNotComparable) {
  auto c = make_side("candidate", model(1.0, 2));
  for (auto& f : c.files) f.config["registration"] = "symmetric_window";
  const auto b = make_side("baseline", model(1.0, 1));
  CompareOptions o;
  o.resamples = 100;
  const auto r = compare_sides(b, c, o);
  EXPECT_EQ(r.verdict, Verdict::not_comparable);
  EXPECT_EQ(r.mismatches, (std::vector<std::string>{"registration"}));
  EXPECT_NE(r.reason.find("registration differs (none vs symmetric_window"), std::string::npos) << r.reason;
  o.allow_mismatch = {"registration"};
  EXPECT_NE(compare_sides(b, c, o).verdict, Verdict::not_comparable);
  // "none" recorded compares with a file that does not say.
  auto b2 = make_side("baseline", model(1.0, 1));
  for (auto& f : b2.files) f.config["registration"] = "none";
  o.allow_mismatch = {};
  EXPECT_NE(compare_sides(b2, make_side("candidate", model(1.0, 2)), o).verdict, Verdict::not_comparable);
}

TEST(Metadata, ExpectedDifferencesAreListedAndRequirementsChecked) {
  RunModel cand = model(1.18, 2);
  cand.instance_type = "p6-b200.48xlarge";
  cand.generation = "v4";
  const auto b = make_side("baseline", model(1.0, 1)), c = make_side("candidate", cand);
  Claim claim = claim_18();
  claim.baseline["efa_generation"] = {"v3"};
  claim.candidate["efa_generation"] = {"EFAv4"};
  const auto r = compare_sides(b, c, with_claim(claim));
  EXPECT_EQ(r.verdict, Verdict::confirmed) << r.reason;
  bool listed = false;
  for (const auto& d : r.differences) {
    listed = listed || (d.key == "instance_type" && d.baseline == "p5en.48xlarge" && d.candidate == "p6-b200.48xlarge");
  }
  EXPECT_TRUE(listed);
  claim.candidate["efa_generation"] = {"v5"};
  const auto wrong = compare_sides(b, c, with_claim(claim));
  EXPECT_EQ(wrong.verdict, Verdict::not_comparable);
  EXPECT_NE(wrong.reason.find("candidate efa_generation"), std::string::npos) << wrong.reason;
}

TEST(Match, SizesOnOneSideAreListed) {
  RunModel cand = model(1.0, 2);
  cand.sizes.pop_back();
  CompareOptions o;
  o.resamples = 100;
  const auto r = compare_sides(make_side("baseline", model(1.0, 1)), make_side("candidate", cand), o);
  EXPECT_EQ(r.only_in_baseline.size(), 3u);  // 1G of three ops
  EXPECT_TRUE(r.only_in_candidate.empty());
  EXPECT_EQ(r.rows.size(), 15u);
  const auto j = compare::compare_to_json(r);
  EXPECT_EQ(j["only_in_baseline"].size(), 3u);
  EXPECT_EQ(j["only_in_baseline"][0]["bytes"], 1ull << 30);
}

TEST(Render, TextMarkdownAndJsonCarryTheVerdict) {
  const auto b = make_side("baseline", model(1.0, 1)), c = make_side("candidate", model(1.18, 2));
  const auto r = compare_sides(b, c, with_claim(claim_18()));
  const auto text = compare::render_compare_text(r);
  EXPECT_NE(text.find("verdict: confirmed (exit 0)"), std::string::npos);
  EXPECT_NE(text.find("geomean over 18 sizes"), std::string::npos);
  // One generated file of 6 trials a side: trials of one launch, not 6 launches.
  EXPECT_NE(text.find("CIs: t intervals on trials (6 vs 6 trials in 1 launch each)"), std::string::npos) << text;
  EXPECT_NE(text.find("per-size CIs are across launches"), std::string::npos);
  const auto md = compare::render_compare_markdown(r);
  EXPECT_NE(md.find("| op | bytes |"), std::string::npos);
  EXPECT_NE(md.find("**confirmed**"), std::string::npos);
  const auto j = compare::compare_to_json(r);
  for (const char* key : {"verdict", "exit_code", "claim", "summary", "rows", "differences", "warnings"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["summary"]["statistic"], "geomean");
  EXPECT_EQ(j["summary"]["seed"], 20250709);
  EXPECT_EQ(j["rows"][0]["ci"].size(), 2u);
  // Not significant rows show "~".
  const auto aa = compare_sides(b, make_side("candidate", model(1.0, 9)), with_claim(claim_18()));
  EXPECT_NE(compare::render_compare_text(aa).find("~ "), std::string::npos);
}

// One spelling and one exit code per verdict (docs/verdict-format.md): the JSON and text forms
// and the command's exit status come from this table only.
TEST(VerdictEnum, NamesAndExitCodes) {
  const std::pair<Verdict, std::pair<const char*, int>> expected[] = {
      {Verdict::none, {"none", 0}},
      {Verdict::confirmed, {"confirmed", 0}},
      {Verdict::refuted, {"refuted", 1}},
      {Verdict::inconclusive, {"inconclusive", 4}},
      {Verdict::pass, {"pass", 0}},
      {Verdict::regression, {"regression", 1}},
      {Verdict::not_comparable, {"not_comparable", 3}},
  };
  for (const auto& [v, e] : expected) {
    EXPECT_EQ(name(v), e.first);
    EXPECT_EQ(exit_code(v), e.second) << e.first;
    EXPECT_EQ(parse_verdict(e.first), v);
  }
  EXPECT_FALSE(parse_verdict("passed").has_value());
}

}  // namespace
}  // namespace ccbench::compare
