// Claims with power (docs/compare.md "Method", "Drift", "Claims"): the max's estimate is the table's
// largest ratio, the launches-to-decide projection against hand-computed t quantiles, and a drift
// that changes a verdict only where it can explain it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "compare/compare.hpp"
#include "compare/render.hpp"
#include "compare/trials_needed.hpp"
#include "generate.hpp"

namespace ccbench::compare {
namespace {

using testing::make_side;
using testing::RunModel;

Claim claim_18(Statistic statistic) {
  Claim c;
  c.expected_speedup = 0.18;
  c.tolerance = 0.05;
  c.statistic = statistic;
  return c;
}

RunModel model(double ratio, std::uint64_t seed, int trials) {
  RunModel m;
  m.ratio = [ratio](const std::string&, std::uint64_t) { return ratio; };
  m.seed = seed;
  m.trials = trials;
  return m;
}

// Every launch's times scaled by exp(slope * (trial + offset)): a machine that slows down.
Side with_drift(Side s, double slope, int offset) {
  for (auto& f : s.files) {
    for (auto& r : f.results) {
      const double k = std::exp(slope * (r.trial + offset));
      for (auto& v : r.samples_us) v *= k;
      r.time_us.median *= k;
    }
  }
  return s;
}

// Issue 23 item 3: "max (allgather 64M): 1.187x" while the table showed 1.186x there and 1.188x at
// alltoall 64M. The max is the largest ratio the table prints, at the row it names.
TEST(MaxStatistic, IsTheTablesLargestRatio) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const auto b = make_side("baseline", model(1.0, 10 * seed, 5));
    const auto c = make_side("candidate", model(1.18, 10 * seed + 1, 5));
    CompareOptions o;
    o.claim = claim_18(Statistic::max);
    const auto r = compare_sides(b, c, o);
    std::size_t argmax = 0;
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
      if (r.rows[i].ratio > r.rows[argmax].ratio) argmax = i;
    }
    EXPECT_DOUBLE_EQ(r.summary.max_used.ratio, r.rows[argmax].ratio);
    ASSERT_TRUE(r.summary.max.at.has_value());
    EXPECT_EQ(format_key(*r.summary.max.at), format_key(r.rows[argmax].key));
    // The text and the JSON say the same number.
    const std::string cell = fmt::format("{:.3f}x", r.rows[argmax].ratio);
    const auto text = render_compare_text(r);
    EXPECT_NE(text.find(fmt::format("max ({}): {}", format_key(r.rows[argmax].key), cell)), std::string::npos) << text;
    const auto j = compare_to_json(r);
    EXPECT_DOUBLE_EQ(j["summary"]["max"]["ratio"].get<double>(), j["rows"][argmax]["ratio"].get<double>());
  }
}

// A comparison with given trial-level estimates (5 launches a side, no normalisation).
Comparison by_hand(Statistic statistic, std::vector<double> ratios, double se) {
  Comparison c;
  c.baseline.trials = c.candidate.trials = 5;
  c.summary.statistic = statistic;
  c.summary.ci_method = CiMethod::t;
  double best = 0;
  for (double r : ratios) {
    RowResult row;
    row.trial_shift = TShift{std::log(r), se, 8.0};
    c.rows.push_back(row);
    c.summary.max_shifts.push_back(*row.trial_shift);  // the max's per-size estimates, as given
    best = std::max(best, r);
  }
  c.summary.geomean.shift = TShift{std::log(ratios.front()), se, 8.0};
  c.summary.geomean_used.ratio = ratios.front();
  c.summary.max_used.ratio = best;
  c.summary.max_lower_level90 = 0.025;  // as for two sizes by Bonferroni
  c.summary.max_lower_level95 = 0.0125;
  return c;
}

// Geomean log(1.18), se 0.03 at 5 launches a side, band [1.13, 1.23]: the 90% half-width at n
// launches is t_0.95(2n - 2) * 0.03 * sqrt(5 / n): n = 8: 1.7613 * 0.03 * 0.79057 = 0.04177 >
// log(1.23 / 1.18) = 0.04150; n = 9: 1.7459 * 0.03 * 0.74536 = 0.03904 fits. Max of log(1.18) and
// log(1.15), lower bounds at t_0.975: n = 10 gives [1.1286, 1.2242] (lower below 1.13), n = 11
// [1.1313, 1.2219] inside (scipy.stats.t).
TEST(TrialsNeeded, ProjectsTheObservedSpreadByHand) {
  EXPECT_EQ(trials_to_decide(by_hand(Statistic::geomean, {1.18}, 0.03), claim_18(Statistic::geomean), 5), 9);
  EXPECT_EQ(trials_to_decide(by_hand(Statistic::max, {1.18, 1.15}, 0.03), claim_18(Statistic::max), 5), 11);
  // Far outside the band: refuted once the 95% interval clears it.
  const auto low = trials_to_decide(by_hand(Statistic::geomean, {1.11}, 0.03), claim_18(Statistic::geomean), 5);
  ASSERT_TRUE(low.has_value());
  EXPECT_GT(*low, 5);
  // Exactly on the band's edge: no count decides it.
  EXPECT_FALSE(trials_to_decide(by_hand(Statistic::geomean, {1.23}, 0.03), claim_18(Statistic::geomean), 5));
}

TEST(TrialsNeeded, ShownInTextMarkdownAndJson) {
  RunModel mb = model(1.0, 1, 5), mc = model(1.225, 2, 5);
  mb.trial_sigma = mc.trial_sigma = 0.02;
  CompareOptions o;
  o.claim = claim_18(Statistic::geomean);
  const auto r = compare_sides(make_side("baseline", mb), make_side("candidate", mc), o);
  ASSERT_EQ(r.verdict, Verdict::inconclusive) << r.reason;
  ASSERT_TRUE(r.trials_needed.has_value()) << r.reason;
  EXPECT_GT(*r.trials_needed, 5);
  // One generated file of 5 trials a side: trials in one launch, not counted as launches.
  const std::string line =
      fmt::format("to decide: about {} launches per side (have 5 vs 5 trials in 1 launch each)", *r.trials_needed);
  EXPECT_NE(render_compare_text(r).find(line), std::string::npos);
  EXPECT_NE(render_compare_markdown(r).find(line), std::string::npos);
  EXPECT_NE(r.reason.find(fmt::format("about {} launches per side (have 5 trials, not separate launches) would "
                                      "likely decide it",
                                      *r.trials_needed)),
            std::string::npos)
      << r.reason;
  EXPECT_EQ(compare_to_json(r)["summary"]["trials_needed"], *r.trials_needed);
  // The projection is what it says: with that many launches drawn from the same model, decided.
  mb.trials = mc.trials = *r.trials_needed;
  const auto more = compare_sides(make_side("baseline", mb), make_side("candidate", mc), o);
  EXPECT_NE(more.verdict, Verdict::inconclusive) << more.reason;
}

// The candidate launched after the baseline on a machine slowing by 0.5% a launch: 10 + 10 launches
// put about 5% between the sides. A gate failure the drift can explain is inconclusive (and says to
// alternate); a 25% slowdown is a regression whatever the drift.
TEST(Drift, ChangesAGateVerdictOnlyWhereItCanExplainIt) {
  CompareOptions o;
  o.gate = Gate{0.0, 0.05};
  const auto b = with_drift(make_side("baseline", model(1.0, 1, 10)), 0.005, 0);
  const auto same = with_drift(make_side("candidate", model(1.0, 2, 10)), 0.005, 10);
  const auto r = compare_sides(b, same, o);
  EXPECT_EQ(r.verdict, Verdict::inconclusive) << r.reason;
  EXPECT_TRUE(r.drift_changed_verdict);
  EXPECT_EQ(r.trials_needed, 10);
  EXPECT_NE(r.reason.find("alternating (A B A B ...)"), std::string::npos) << r.reason;
  const auto slow = with_drift(make_side("candidate", model(1.0 / 1.25, 2, 10)), 0.005, 10);
  const auto s = compare_sides(b, slow, o);
  EXPECT_EQ(s.verdict, Verdict::regression) << s.reason;
  EXPECT_FALSE(s.drift_changed_verdict);
  EXPECT_NE(s.reason.find("fail even with the threshold raised by the drift's largest bias"), std::string::npos)
      << s.reason;
  EXPECT_EQ(compare_to_json(s)["summary"]["drift_changed_verdict"], false);
}

// A claim: a drift of 0.1% a launch (about 1% between the sides) is found but cannot move a true
// 1.18 out of [1.13, 1.23]; 1% a launch (about 10%: the later candidate measures 1.07) can, and the
// verdict becomes inconclusive.
TEST(Drift, ChangesAClaimOnlyWhereItMatters) {
  CompareOptions o;
  o.claim = claim_18(Statistic::geomean);
  const auto b = make_side("baseline", model(1.0, 1, 10));
  const auto c = make_side("candidate", model(1.18, 2, 10));
  const auto small = compare_sides(with_drift(b, 0.001, 0), with_drift(c, 0.001, 10), o);
  EXPECT_TRUE(drift_detected(small.summary));
  EXPECT_EQ(small.verdict, Verdict::confirmed) << small.reason;
  EXPECT_FALSE(small.drift_changed_verdict);
  EXPECT_NE(small.reason.find("the verdict holds with the intervals widened"), std::string::npos) << small.reason;
  const auto large = compare_sides(with_drift(b, 0.01, 0), with_drift(c, 0.01, 10), o);
  EXPECT_EQ(large.verdict, Verdict::inconclusive) << large.reason;
  EXPECT_TRUE(large.drift_changed_verdict);
  EXPECT_NE(large.reason.find("would be refuted, but the launches drift"), std::string::npos) << large.reason;
  EXPECT_NE(large.reason.find("with the sides' launches alternating"), std::string::npos) << large.reason;
  // Without a drift nothing is flagged.
  const auto none = compare_sides(b, c, o);
  EXPECT_FALSE(drift_detected(none.summary));
  EXPECT_EQ(none.verdict, Verdict::confirmed);
}

}  // namespace
}  // namespace ccbench::compare
