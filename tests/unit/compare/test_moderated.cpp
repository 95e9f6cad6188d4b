// The max's spread rule as a verdict carries it: the reason and the JSON name it, per-size keeps
// each size's own t (the rows' estimates), moderated changes only the max's bounds, and the geomean
// is the same under both. The moderated estimates themselves are checked against SciPy and an
// independent implementation by test_moderated_scipy.py.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "compare/compare.hpp"
#include "compare/max_critical.hpp"
#include "compare/render.hpp"
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

Comparison compared(Statistic statistic, Spread spread) {
  RunModel mb, mc;
  mb.trials = mc.trials = 6;
  mb.seed = 11;
  mc.seed = 12;
  mc.ratio = [](const std::string&, std::uint64_t) { return 1.18; };
  CompareOptions o;
  o.claim = claim_18(statistic);
  o.spread = spread;
  return compare_sides(make_side("baseline", mb), make_side("candidate", mc), o);
}

TEST(ModeratedSpread, PerSizeKeepsEachSizesOwnTAndTheReasonNamesIt) {
  const Comparison c = compared(Statistic::max, Spread::per_size);
  ASSERT_EQ(c.summary.ci_method, CiMethod::t) << c.reason;
  std::vector<TShift> own;
  for (const auto& r : c.rows) own.push_back(*r.trial_shift);
  const auto ci = max_interval(own, c.summary.max_lower_level95, c.summary.looks.per_look(0.025));
  ASSERT_TRUE(c.summary.max.ci95.has_value());
  EXPECT_DOUBLE_EQ(c.summary.max.ci95->first, std::exp(ci.first));
  EXPECT_DOUBLE_EQ(c.summary.max.ci95->second, std::exp(ci.second));
  EXPECT_NE(c.reason.find("; spread: per-size (each size's bounds from its own launches)"), std::string::npos)
      << c.reason;
  EXPECT_EQ(compare_to_json(c)["summary"]["spread"], "per-size");
  EXPECT_FALSE(compare_to_json(c)["summary"].contains("spread_prior"));
}

TEST(ModeratedSpread, IsTheMaxsDefaultAndMovesOnlyItsBounds) {
  EXPECT_EQ(CompareOptions{}.spread, Spread::moderated);
  const Comparison m = compared(Statistic::max, Spread::moderated);
  const Comparison p = compared(Statistic::max, Spread::per_size);
  ASSERT_EQ(m.rows.size(), m.summary.max_shifts.size());
  for (std::size_t i = 0; i < m.rows.size(); ++i) {
    // The same estimates; only their spreads (and df) are moderated. The rows' own t is untouched.
    EXPECT_DOUBLE_EQ(m.summary.max_shifts[i].estimate, m.rows[i].trial_shift->estimate);
    EXPECT_DOUBLE_EQ(m.rows[i].trial_shift->se, p.rows[i].trial_shift->se);
  }
  EXPECT_NE(*m.summary.max.ci95, *p.summary.max.ci95);
  EXPECT_DOUBLE_EQ(m.summary.max.ratio, p.summary.max.ratio);
  const auto j = compare_to_json(m)["summary"];
  EXPECT_EQ(j["spread"], "moderated");
  const SpreadPrior& pooled = m.summary.spread_prior_pooled;
  const std::string df = std::isinf(pooled.df) ? "infinite" : fmt::format("{:.3g}", pooled.df);
  EXPECT_NE(m.reason.find("; spread: moderated (each size's launch spread shrunk toward the sizes' shared spread, "
                          "prior df " +
                          df + ")"),
            std::string::npos)
      << m.reason;
  EXPECT_DOUBLE_EQ(j["spread_prior"]["pooled"]["variance"].get<double>(), pooled.variance);
}

TEST(ModeratedSpread, GeomeanIsUnchanged) {
  const Comparison m = compared(Statistic::geomean, Spread::moderated);
  const Comparison p = compared(Statistic::geomean, Spread::per_size);
  EXPECT_EQ(m.verdict, p.verdict);
  EXPECT_EQ(*m.summary.geomean.ci95, *p.summary.geomean.ci95);
  EXPECT_EQ(*m.summary.geomean.ci90, *p.summary.geomean.ci90);
  EXPECT_EQ(m.reason.find("spread:"), std::string::npos) << m.reason;
}

}  // namespace
}  // namespace ccbench::compare
