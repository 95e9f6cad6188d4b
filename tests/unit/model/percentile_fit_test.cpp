// A model of a percentile (`model fit --percentile P`, docs/model.md "Percentile curves"): fitted on
// the rows' percentiles_us level, recorded in the file, answering that statistic only, and chosen
// by `first_measured` for a query of that statistic. Noiseless rows from one known regime, the
// level set to exactly twice the median, so both curves come back exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "core/error.hpp"
#include "model/fit.hpp"
#include "model/model.hpp"
#include "model/plan.hpp"
#include "synthetic.hpp"

namespace ccbench::model {
namespace {

FitOptions quick(double percentile = 0) {
  FitOptions opt;
  opt.refits = 5;
  opt.cross_validate = false;
  opt.percentile = percentile;
  return opt;
}

// 12 us + S / 50 GB/s on 1 node x 8; every row's p99 is twice its median, with a CI of +-5%.
ResultFile file_with_p99() {
  synthetic::Truth truth;
  truth.noise_log = 0;
  Regime r;
  r.latency_us = 12;
  r.us_per_byte = 1.0 / 50e3;
  truth.regimes = {r};
  std::mt19937_64 rng(5);
  ResultFile f = synthetic::make_file(truth, {Op::allreduce}, synthetic::pow2_sizes(1024, 64ULL << 20), 1, 8, 1,
                                      "p5.48xlarge", rng);
  f.source = "p99.json";
  for (auto& row : f.results) {
    const double p99 = 2 * row.time_us.median;
    row.extra["percentiles_us"] = {{"p99", {{"value", p99}, {"ci95", {0.95 * p99, 1.05 * p99}}}}};
  }
  return f;
}

TEST(PercentileFit, ObservationsTakeTheLevelAndItsIntervalAndSkipRowsWithoutIt) {
  ResultFile f = file_with_p99();
  f.results.front().extra.erase("percentiles_us");
  const auto medians = observations(f);
  const auto p99 = observations(f, 99);
  ASSERT_EQ(medians.size(), f.results.size());
  ASSERT_EQ(p99.size(), f.results.size() - 1);  // the first row has no p99
  EXPECT_DOUBLE_EQ(p99.front().time_us, 2 * f.results[1].time_us.median);
  // sigma on log scale from the 95% interval: ln(1.05 / 0.95) / (2 x 1.96).
  EXPECT_NEAR(p99.front().sigma_log, std::log(1.05 / 0.95) / (2 * 1.96), 1e-12);
  EXPECT_TRUE(observations(f, 99.9).empty());  // no row has that level
}

TEST(PercentileFit, TheModelAnswersItsOwnStatisticOnlyAndKeepsItInTheFile) {
  const ResultFile f = file_with_p99();
  const Model median = fit(observations(f), quick(), {"p99.json"});
  const Model p99 = fit(observations(f, 99), quick(99), {"p99.json"});
  EXPECT_EQ(median.percentile(), 0);
  EXPECT_EQ(p99.percentile(), 99);
  PredictQuery q{Op::allreduce, 1ULL << 20, 1, 8, "p5.48xlarge"};
  const double t_median = median.predict(q).time_us;
  q.percentile = 99;
  EXPECT_NEAR(p99.predict(q).time_us / t_median, 2.0, 1e-6);
  // Each refuses the other's statistic, naming what to fit.
  try {
    median.predict(q);
    ADD_FAILURE() << "a median model answered a p99";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("fitted on the median of a call's time, not the p99"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("model fit --percentile 99"), std::string::npos) << e.what();
  }
  q.percentile = 0;
  EXPECT_THROW(p99.predict(q), UsageError);
  // The level survives the file; a level outside (0, 100) is refused naming the key.
  const Model again = Model::from_json(p99.to_json(), "m.json");
  EXPECT_EQ(again.percentile(), 99);
  EXPECT_FALSE(median.to_json().contains("percentile"));  // a median model's file is as before
  nlohmann::json bad = p99.to_json();
  bad["percentile"] = 100;
  try {
    Model::from_json(bad, "m.json");
    ADD_FAILURE() << "percentile 100 loaded";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("percentile"), std::string::npos) << e.what();
  }
}

TEST(PercentileFit, FirstMeasuredPicksTheModelOfTheQuerysStatistic) {
  const ResultFile f = file_with_p99();
  const std::vector<Model> models{fit(observations(f), quick(), {"p99.json"}),
                                  fit(observations(f, 99), quick(99), {"p99.json"})};
  const Pricer price = first_measured(models);
  PredictQuery q{Op::allreduce, 1ULL << 20, 1, 8, "p5.48xlarge"};
  const double t_median = price(q).time_us;
  q.percentile = 99;
  EXPECT_NEAR(price(q).time_us / t_median, 2.0, 1e-6);
  q.percentile = 99.9;  // no model of that level: the error names it
  try {
    price(q);
    ADD_FAILURE() << "a p99.9 was priced";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("not the p99.9"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ccbench::model
