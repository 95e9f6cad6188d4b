// `ccbench replay --percentiles`: trial_rows gives every call site's row and the step's row the
// percentiles_us of its per-step samples, worked out by hand here (type-7, and the order-statistic
// interval of 20 samples from the Binomial(20, 1/2) table).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "replay/plan.hpp"
#include "replay/runner.hpp"
#include "trace/trace.hpp"

namespace ccbench {
namespace {

const std::string kFourRanks = std::string(CCBENCH_SOURCE_DIR) + "/tests/data/replay/four_ranks.trace.json";

TEST(ReplayPercentiles, EveryRowHoldsItsStepsPercentilesAndIntervals) {
  const trace::Trace trace = trace::load(kFourRanks);
  const replay::ReplayPlan plan = replay::make_plan(trace, replay::identity_map(4, 4), kFourRanks);
  const std::size_t sites = plan.sites.size();
  // Step s (0..19): site k took (s + 1) * (k + 1) us, the step their sum, (s + 1) * sum(k + 1).
  constexpr int kSteps = 20;
  double per_step_unit = 0;
  for (std::size_t k = 0; k < sites; ++k) per_step_unit += static_cast<double>(k + 1);
  std::vector<std::vector<double>> samples(kSteps);
  for (int s = kSteps - 1; s >= 0; --s) {  // out of order: the rows sort their own copy
    auto& step = samples[static_cast<std::size_t>(s)];
    for (std::size_t k = 0; k < sites; ++k) step.push_back((s + 1) * static_cast<double>(k + 1));
    step.push_back((s + 1) * per_step_unit);
  }
  const std::vector<double> levels = {50, 90};
  const std::vector<ResultRow> rows = replay::trial_rows(plan, "recording", 0, samples, 0, 0.01, levels);
  ASSERT_EQ(rows.size(), sites + 1);
  for (std::size_t k = 0; k <= sites; ++k) {
    const double unit = k < sites ? static_cast<double>(k + 1) : per_step_unit;
    const nlohmann::json& p = rows[k].extra.at("percentiles_us");
    SCOPED_TRACE(rows[k].op);
    // Sorted samples are unit x 1..20. p50: h = 19 x 0.5 = 9.5, between the 10th and 11th: 10.5.
    EXPECT_DOUBLE_EQ(p["p50"]["value"].get<double>(), 10.5 * unit);
    // P(B <= 5) = 0.0207 <= 2.5% < P(B <= 6) = 0.0577: [X(5), X(14)] zero-based, 6 and 15 units.
    EXPECT_EQ(p["p50"]["ci95"], nlohmann::json::array({6 * unit, 15 * unit}));
    // p90: h = 19 x 0.9 = 17.1: 18 + 0.1 units; 20 samples are too few for its interval (36).
    EXPECT_NEAR(p["p90"]["value"].get<double>(), 18.1 * unit, 1e-12 * unit);
    EXPECT_TRUE(p["p90"]["ci95"].is_null());
    EXPECT_NE(p["p90"]["ci_absent"].get<std::string>().find("36"), std::string::npos);
  }
  EXPECT_EQ(rows.back().op, "replay_step");
  // Without levels the rows are as before: no percentiles_us.
  for (const ResultRow& row : replay::trial_rows(plan, "recording", 0, samples, 0, 0.01)) {
    EXPECT_FALSE(row.extra.contains("percentiles_us"));
  }
}

}  // namespace
}  // namespace ccbench
