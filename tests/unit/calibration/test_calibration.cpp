// Short calibration run (CI): compare's verdicts over many independent simulated pairs, asserted
// against binomial bounds. Seeds are fixed, so the outcome is deterministic; the bounds say why the
// counts are evidence: each assertion fails only when the data exclude the promised rate at 99.9%
// (one-sided Clopper-Pearson), i.e. a correct method would fail it with probability < 0.1%.
// The long run with the tables of docs/compare.md is benchmarks/calibration. These rates are the
// single-look rule's (--looks once: one look at a launch count fixed in advance); asking again
// after adding launches is test_sequential.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <string>

#include "compare/compare.hpp"
#include "compare/load.hpp"
#include "harness.hpp"

namespace ccbench::calibration {
namespace {

namespace fs = std::filesystem;
using compare::CompareOptions;
using compare::Gate;
using compare::Statistic;

constexpr double kAlpha = 0.05;
constexpr double kEvidence = 0.999;

CompareOptions gate(double threshold) {
  CompareOptions o = one_look();
  o.gate = Gate{threshold, kAlpha};
  return o;
}

// A/A false alarms at most alpha: the observed count must not exclude a rate <= alpha.
void expect_false_alarms_at_most_alpha(const Counts& c, const std::string& what) {
  EXPECT_LE(binomial_lower(c.regression, c.runs, kEvidence), kAlpha)
      << what << ": " << c.regression << " false alarms in " << c.runs;
}

TEST(Calibration, GateFalseAlarmsAtMostAlphaAtEveryTrialCount) {
  // The configurations the issue found failing (3 trials, below --min-trials) and the rest.
  for (int trials : {1, 2, 3, 5, 10}) {
    for (double sigma : {0.005, 0.02}) {
      for (double threshold : {0.0, 0.01}) {
        NoiseModel m;
        m.trials = trials;
        m.launch_sigma = sigma;
        const auto c = run_pairs(m, m, gate(threshold), trials >= 5 ? 60 : 100, 11 + trials, 0.0);
        expect_false_alarms_at_most_alpha(c, fmt::format("trials {} sigma {} threshold {}", trials, sigma, threshold));
        if (trials == 1) {
          // One launch a side: no test is possible; never a regression, always inconclusive.
          EXPECT_EQ(c.inconclusive, c.runs);
        }
      }
    }
  }
}

TEST(Calibration, GateOnTheP99FalseAlarmsAtMostAlpha) {
  // compare --statistic p99: rows of 400 per-iteration samples, each trial reduced to its p99, whose
  // value the 1% outliers (x1.5-3) set; A/A at 5 launches a side (docs/compare.md "Calibration").
  NoiseModel m;
  m.trials = 5;
  m.samples = 400;
  m.percentiles = {99};
  auto o = gate(0.0);
  o.row_percentile = 99;
  const auto c = run_pairs(m, m, o, 60, 31, 0.0);
  expect_false_alarms_at_most_alpha(c, "p99, 5 trials");
}

TEST(Calibration, GateWithOneLaunchAgainstManyHoldsAlpha) {
  // A nightly CI: one new launch against a folder of 10 baseline launches.
  NoiseModel base, cand;
  base.trials = 10;
  cand.trials = 1;
  const auto c = run_pairs(base, cand, gate(0.0), 200, 5, 0.0);
  expect_false_alarms_at_most_alpha(c, "1 vs 10 trials");
  EXPECT_EQ(c.inconclusive, 0);
}

TEST(Calibration, GateThresholdIsTestedNotJustCompared) {
  // A true 4% slowdown at every size, --threshold 5%: "fail only when slower by more than 5%, with
  // confidence" must fail at most alpha of the time; a true 10% slowdown fails almost always.
  NoiseModel base, slow;
  base.trials = slow.trials = 10;
  slow.ratio = [](const std::string&, std::size_t) { return 1.0 / 1.04; };
  const auto c = run_pairs(base, slow, gate(0.05), 100, 21, 0.0);
  EXPECT_LE(binomial_lower(c.regression, c.runs, kEvidence), kAlpha) << c.regression;
  slow.ratio = [](const std::string&, std::size_t) { return 1.0 / 1.10; };
  const auto p = run_pairs(base, slow, gate(0.05), 40, 22, 0.0);
  EXPECT_GE(p.regression, 36) << "power for a 10% slowdown at --threshold 5%, 10 trials";
}

TEST(Calibration, DriftIsDetectedAndNeverARegression) {
  // 0.5% per launch, the candidate launched after the baseline: a regression verdict would be the
  // drift's. With 10 trials the trend is found and the verdict is inconclusive.
  NoiseModel base, cand;
  base.trials = cand.trials = 10;
  base.drift_per_launch = cand.drift_per_launch = 0.005;
  cand.launch_offset = 10;
  const auto c = run_pairs(base, cand, gate(0.0), 60, 31, 0.0);
  expect_false_alarms_at_most_alpha(c, "drift 0.5%/launch");
  EXPECT_GE(c.inconclusive, 30);
}

// A drift decides a claim only where it can: 0.1% per launch over 8 + 8 launches biases the sides
// by under 1%, and a true 1.18 against 18% +- 5% stays confirmed (widened intervals still inside
// the band), while the same drift beside a ratio at the band's edge is not confirmed more than 5%.
TEST(Calibration, DriftDecidesAClaimOnlyWhereItCan) {
  NoiseModel base, cand;
  base.sizes = cand.sizes = claim_sizes();
  base.trials = cand.trials = 8;
  base.drift_per_launch = cand.drift_per_launch = 0.001;
  cand.launch_offset = 8;
  CompareOptions o = one_look();
  o.claim = claim_18(Statistic::geomean);
  cand.ratio = [](const std::string&, std::size_t) { return 1.18; };
  const auto in = run_pairs(base, cand, o, 40, 71, std::log(1.18));
  EXPECT_GE(in.confirmed, 30) << in.confirmed << " confirmed, " << in.inconclusive << " inconclusive";
  cand.ratio = [](const std::string&, std::size_t) { return 1.13; };
  const auto edge = run_pairs(base, cand, o, 40, 72, std::log(1.13));
  EXPECT_LE(binomial_lower(edge.confirmed, edge.runs, kEvidence), 0.05) << edge.confirmed;
}

TEST(Calibration, GeomeanIntervalCoversAndPValueIsCalibrated) {
  NoiseModel m;
  m.trials = 5;
  CompareOptions o = one_look();  // report only
  const auto c = run_pairs(m, m, o, 400, 41, 0.0);
  ASSERT_EQ(c.with_ci, c.runs);
  EXPECT_GE(static_cast<double>(c.covered95) / c.runs, 0.93) << c.covered95;
  EXPECT_GE(binomial_upper(c.covered90, c.runs, kEvidence), 0.90) << c.covered90;
  EXPECT_LE(binomial_lower(c.p_below_05, c.runs, kEvidence), 0.05) << c.p_below_05;
  // Three trials, the fewest the issue asked about.
  m.trials = 3;
  const auto t3 = run_pairs(m, m, o, 300, 42, 0.0);
  EXPECT_GE(binomial_upper(t3.covered95, t3.runs, kEvidence), 0.95) << t3.covered95;
}

// 30 rows (the shipped "up to" claim's scope), 5 launches a side, 1% launch noise; `common` is the
// share of the launch effect common to every size of the launch (1: a launch moves them together).
NoiseModel claim_model(double common, int trials = 5) {
  NoiseModel m;
  m.sizes = claim_sizes();
  m.trials = trials;
  m.launch_common = common;
  return m;
}

Counts up_to(double common, const std::function<double(const std::string&, std::size_t)>& ratio, int pairs,
             std::uint64_t seed, double true_max) {
  const NoiseModel base = claim_model(common);
  NoiseModel cand = base;
  cand.ratio = ratio;
  CompareOptions o = one_look();
  o.claim = claim_18(Statistic::max);
  return run_pairs(base, cand, o, pairs, seed, std::log(true_max));
}

auto flat(double r) {
  return [r](const std::string&, std::size_t) { return r; };
}

TEST(Calibration, MaxIntervalCoversAtItsNominalLevel) {
  // The hardest case for a max: the true ratio flat across 30 rows (every lower bound must hold at
  // once, and the winner's curse is largest), with half, all and none of the launch effect common.
  for (double common : {0.5, 1.0, 0.0}) {
    NoiseModel base = claim_model(common), cand = base;
    cand.ratio = flat(1.18);
    CompareOptions o = one_look();
    o.statistic = Statistic::max;
    const auto c = run_pairs(base, cand, o, common == 0.5 ? 200 : 100, 51, std::log(1.18));
    ASSERT_EQ(c.with_ci, c.runs);
    EXPECT_GE(binomial_upper(c.covered95, c.runs, kEvidence), 0.95) << common << ": " << c.covered95;
    EXPECT_GE(binomial_upper(c.covered90, c.runs, kEvidence), 0.90) << common << ": " << c.covered90;
  }
}

TEST(Calibration, UpToClaimDoesNotConfirmOutsideTheBand) {
  // 12% faster everywhere is outside 18% +- 5%: "up to 18%" must not be confirmed (the issue saw
  // 32.5% at 5 trials), nor at the band's edges more than 5% of the time, nor when one size stands
  // out above the band while the rest sit inside it.
  for (double common : {0.5, 1.0}) {
    for (double ratio : {1.12, 1.13, 1.23}) {
      const auto c = up_to(common, flat(ratio), 100, 61, ratio);
      EXPECT_LE(binomial_lower(c.confirmed, c.runs, kEvidence), 0.05) << common << " " << ratio << ": " << c.confirmed;
    }
    const std::size_t last = claim_sizes().size() - 1;
    const auto one_above = up_to(
        common, [last](const std::string& op, std::size_t i) { return op == "allreduce" && i == last ? 1.25 : 1.18; },
        100, 63, 1.25);
    EXPECT_LE(binomial_lower(one_above.confirmed, one_above.runs, kEvidence), 0.05) << one_above.confirmed;
  }
}

// The targets at 5 launches, 1% noise, 30 rows: a true 1.18 confirmed >= 90%. A true 1.10
// refuted >= 90% and a true 1.21 confirmed >= 50% are out of reach of any interval that holds where
// one size alone is the maximum (docs/compare.md "What 'up to' means": even with each size's spread
// known exactly, 61% / 80% and 9% / 35%); these assert what the method reaches, measured in the
// calibration tables, so that a change that loses it fails.
TEST(Calibration, UpToClaimPower) {
  for (double common : {0.5, 1.0}) {
    const auto in = up_to(common, flat(1.18), 60, 64, 1.18);
    EXPECT_GE(binomial_upper(in.confirmed, in.runs, kEvidence), 0.90) << common << ": " << in.confirmed;
    EXPECT_GE(in.confirmed, 54) << common;
  }
  // Measured at 200 pairs: 1.10 refuted 22% (half common) and 58% (all common), 1.21 confirmed 23%
  // (all common); a rate a third lower fails at 99.9% evidence.
  const auto low_half = up_to(0.5, flat(1.10), 60, 65, 1.10);
  EXPECT_GE(binomial_upper(low_half.refuted, low_half.runs, kEvidence), 0.15) << low_half.refuted;
  const auto low_common = up_to(1.0, flat(1.10), 60, 66, 1.10);
  EXPECT_GE(binomial_upper(low_common.refuted, low_common.runs, kEvidence), 0.40) << low_common.refuted;
  const auto edge_common = up_to(1.0, flat(1.21), 60, 67, 1.21);
  EXPECT_GE(binomial_upper(edge_common.confirmed, edge_common.runs, kEvidence), 0.15) << edge_common.confirmed;
}

// No drift in the data: a drift flag (false-flag rate 1% in all) changes at most 1% of verdicts,
// over claims (geomean and max, inside and outside the band) and the gate.
TEST(Calibration, NoDriftChangesAtMostOnePercentOfVerdicts) {
  int runs = 0, flagged = 0, changed = 0;
  auto add = [&](const Counts& c) {
    runs += c.runs;
    flagged += c.drift_flagged;
    changed += c.drift_changed;
  };
  for (double ratio : {1.10, 1.18, 1.25}) {
    for (auto st : {Statistic::geomean, Statistic::max}) {
      NoiseModel base = claim_model(0.5), cand = base;
      cand.ratio = flat(ratio);
      CompareOptions o = one_look();
      o.claim = claim_18(st);
      add(run_pairs(base, cand, o, 60, 81, std::log(ratio)));
    }
  }
  NoiseModel aa;
  aa.trials = 10;
  add(run_pairs(aa, aa, gate(0.0), 100, 82, 0.0));
  EXPECT_LE(binomial_lower(changed, runs, kEvidence), 0.01) << changed << " changed of " << runs;
  EXPECT_LE(binomial_lower(flagged, runs, kEvidence), 0.01) << flagged << " flagged of " << runs;
}

TEST(Calibration, GeomeanClaimEdgeFalseConfirmationsAtMostFivePercent) {
  NoiseModel base, cand;
  base.trials = cand.trials = 5;
  CompareOptions o = one_look();
  o.claim = claim_18(Statistic::geomean);
  for (double ratio : {1.13, 1.23}) {
    cand.ratio = [ratio](const std::string&, std::size_t) { return ratio; };
    const auto c = run_pairs(base, cand, o, 200, 71, std::log(ratio));
    EXPECT_LE(binomial_lower(c.confirmed, c.runs, kEvidence), 0.05) << ratio << ": " << c.confirmed;
  }
}

// One file with N trials and N files of one trial are the same data to compare; written and read
// back through the real loader (the JSON round trip and folder expansion included).
TEST(Calibration, OneFileWithNTrialsEqualsNFiles) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("ccbench-calibration-{}", ::getpid());
  fs::remove_all(dir);
  NoiseModel m;
  m.trials = 4;
  m.samples = 12;
  m.drift_per_launch = 0.004;
  NoiseModel k = m;
  k.ratio = [](const std::string&, std::size_t i) { return i == 2 ? 0.9 : 1.0; };
  auto write = [&](const NoiseModel& model, std::uint64_t seed, const fs::path& one, const fs::path& folder) {
    NoiseModel single = model, many = model;
    single.one_file_per_trial = false;
    many.one_file_per_trial = true;
    const auto a = make_files(single, seed);
    const auto b = make_files(many, seed);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), static_cast<std::size_t>(model.trials));
    write_file_atomically(one, to_json(a[0]).dump());
    fs::create_directories(folder);
    for (std::size_t i = 0; i < b.size(); ++i) {
      write_file_atomically(folder / fmt::format("launch-{:03}.json", i), to_json(b[i]).dump());
    }
  };
  fs::create_directories(dir);
  write(m, 7, dir / "base.json", dir / "base");
  write(k, 8, dir / "cand.json", dir / "cand");
  for (const auto& options : {gate(0.0), gate(0.05), one_look()}) {
    CompareOptions one = options, many = options;
    one.baseline = {(dir / "base.json").string()};
    one.candidate = {(dir / "cand.json").string()};
    many.baseline = {(dir / "base").string()};
    many.candidate = {(dir / "cand").string()};
    const auto a = compare::compare_runs(one);
    const auto b = compare::compare_runs(many);
    EXPECT_EQ(a.verdict, b.verdict);
    EXPECT_EQ(a.reason, b.reason);
    EXPECT_EQ(a.summary.geomean.ratio, b.summary.geomean.ratio);
    ASSERT_TRUE(a.summary.geomean.ci95 && b.summary.geomean.ci95);
    EXPECT_EQ(*a.summary.geomean.ci95, *b.summary.geomean.ci95);
    EXPECT_EQ(*a.summary.max.ci95, *b.summary.max.ci95);
    ASSERT_TRUE(a.summary.baseline_trend && b.summary.baseline_trend);
    EXPECT_EQ(a.summary.baseline_trend->slope_per_launch, b.summary.baseline_trend->slope_per_launch);
    ASSERT_EQ(a.rows.size(), b.rows.size());
    for (std::size_t i = 0; i < a.rows.size(); ++i) {
      EXPECT_EQ(a.rows[i].ratio, b.rows[i].ratio);
      EXPECT_EQ(a.rows[i].p_gate, b.rows[i].p_gate);
      EXPECT_EQ(a.rows[i].regression, b.rows[i].regression);
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ccbench::calibration
