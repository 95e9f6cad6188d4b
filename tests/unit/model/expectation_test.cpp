// model/expectation: rows judged against a model fitted on the known answer (synthetic.hpp) — the
// verdict at and beyond each band, the 99% band's arithmetic by hand, the metric rule, every reason
// a row is not covered (exact text), the spec basis and the JSON object.
#include "model/expectation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/bandwidth.hpp"
#include "core/error.hpp"
#include "model/fit.hpp"
#include "synthetic.hpp"

namespace ccbench::model {
namespace {

// z(0.995) / z(0.95), by hand from the normal quantiles 2.5758293035489004 and 1.6448536269514722
// (SciPy's norm.ppf; the Python test tests/unit/model/test_model_check.py asks SciPy itself).
constexpr double kRatio99 = 1.565993022931088;

const Model& known_model() {
  static const Model m = [] {
    std::mt19937_64 rng(11);
    std::vector<Observation> rows;
    for (int n : {2, 4, 8}) {
      auto f = synthetic::make_file(synthetic::two_regime_truth(), {Op::allreduce},
                                    synthetic::pow2_sizes(1024, 512ULL << 20), n, 8, 5, "p5en.48xlarge", rng);
      f.source = "known-" + std::to_string(n) + ".json";
      const auto o = observations(f);
      rows.insert(rows.end(), o.begin(), o.end());
    }
    FitOptions opt;
    opt.refits = 50;
    opt.cross_validate = false;
    return fit(rows, opt, {});
  }();
  return m;
}

Expectation known(JudgeOptions options = {}, std::optional<std::string> only = {}) {
  return Expectation(known_model(), "known.json", options, std::move(only));
}

const RunShape kShape{"p5en.48xlarge", 4, 8};

ResultRow row_of(std::uint64_t bytes, double time_us, const std::string& op = "allreduce", int ranks = 32) {
  ResultRow r;
  r.op = op;
  r.backend = "mpi";
  r.dtype = "float";
  r.redop = "sum";
  r.bytes = bytes;
  r.count = bytes / 4;
  r.ranks = ranks;
  r.samples_us = {time_us};
  r.time_us.median = time_us;
  return r;
}

Prediction predicted(std::uint64_t bytes, int nodes = 4, const std::string& profile = "p5en.48xlarge") {
  return known_model().predict({Op::allreduce, bytes, nodes, 8, profile});
}

TEST(Expectation, NinetyNinePercentBandIsTheNinetyPercentHalfWidthsTimesTheQuantileRatio) {
  EXPECT_DOUBLE_EQ(kZ99 / kZ90, kRatio99);
  const Prediction p = predicted(64ULL << 20);
  const TimeBandUs b90 = band_of(p, BandLevel::p90);
  const TimeBandUs b99 = band_of(p, BandLevel::p99);
  EXPECT_EQ(b90.lo, p.time_lo_us);
  EXPECT_EQ(b90.hi, p.time_hi_us);
  // On log scale: ln(t / lo99) = r ln(t / lo90), ln(hi99 / t) = r ln(hi90 / t).
  EXPECT_NEAR(std::log(p.time_us / b99.lo), kRatio99 * std::log(p.time_us / p.time_lo_us), 1e-12);
  EXPECT_NEAR(std::log(b99.hi / p.time_us), kRatio99 * std::log(p.time_hi_us / p.time_us), 1e-12);
  EXPECT_LT(b99.lo, b90.lo);
  EXPECT_GT(b99.hi, b90.hi);
}

TEST(Expectation, ARowAtThePredictionIsNormalInBusbwWithItsBand) {
  const std::uint64_t s = 64ULL << 20;
  const Prediction p = predicted(s);
  const TimeBandUs b = band_of(p, BandLevel::p99);
  const RowExpectation e = known().judge(kShape, row_of(s, p.time_us));
  EXPECT_EQ(e.verdict, Verdict::normal);
  EXPECT_EQ(e.metric, ExpectedMetric::busbw_gbps);  // 64 MiB: the bytes terms dominate
  EXPECT_LT(p.latency_share, 0.5);
  EXPECT_EQ(e.band, BandLevel::p99);
  EXPECT_EQ(e.basis, Basis::measured);
  EXPECT_FALSE(e.extrapolated);
  EXPECT_DOUBLE_EQ(e.predicted, busbw_gbps(Op::allreduce, 32, s, p.time_us));
  EXPECT_DOUBLE_EQ(e.measured, e.predicted);
  EXPECT_DOUBLE_EQ(e.lo, busbw_gbps(Op::allreduce, 32, s, b.hi));  // the band's slow end is its low busbw
  EXPECT_DOUBLE_EQ(e.hi, busbw_gbps(Op::allreduce, 32, s, b.lo));
  EXPECT_DOUBLE_EQ(e.shortfall_pct, 0.0);
  EXPECT_EQ(e.model, "known.json");
  EXPECT_EQ(e.profile, "p5en.48xlarge");
  EXPECT_EQ(e.missing, Missing::none);
  EXPECT_EQ(e.reason, "");
}

TEST(Expectation, SlowerThanTheBandIsBelowFasterIsAboveWithTheShortfallOfTheBusbw) {
  const std::uint64_t s = 64ULL << 20;
  const Prediction p = predicted(s);
  const TimeBandUs b = band_of(p, BandLevel::p99);
  const RowExpectation slow = known().judge(kShape, row_of(s, b.hi * 1.01));
  EXPECT_EQ(slow.verdict, Verdict::below);
  EXPECT_NEAR(slow.shortfall_pct, 100.0 * (1.0 - p.time_us / (b.hi * 1.01)), 1e-9);
  EXPECT_GT(slow.shortfall_pct, 0);
  EXPECT_LT(slow.measured, slow.lo);
  const RowExpectation fast = known().judge(kShape, row_of(s, b.lo * 0.99));
  EXPECT_EQ(fast.verdict, Verdict::above);
  EXPECT_LT(fast.shortfall_pct, 0);
  EXPECT_GT(fast.measured, fast.hi);
  // The band's own ends are inside it.
  EXPECT_EQ(known().judge(kShape, row_of(s, b.hi)).verdict, Verdict::normal);
  EXPECT_EQ(known().judge(kShape, row_of(s, b.lo)).verdict, Verdict::normal);
  // 50% more time is a third less busbw: 33.3% short.
  EXPECT_NEAR(known().judge(kShape, row_of(s, 1.5 * p.time_us)).shortfall_pct, 100.0 / 3.0, 1e-9);
}

TEST(Expectation, BetweenTheNinetyAndTheNinetyNinePercentBandItDependsOnTheBandAsked) {
  const std::uint64_t s = 64ULL << 20;
  const Prediction p = predicted(s);
  const double t = std::sqrt(p.time_hi_us * band_of(p, BandLevel::p99).hi);  // between the two upper ends
  EXPECT_EQ(known().judge(kShape, row_of(s, t)).verdict, Verdict::normal);
  const RowExpectation e90 = known({BandLevel::p90, false}).judge(kShape, row_of(s, t));
  EXPECT_EQ(e90.verdict, Verdict::below);
  EXPECT_EQ(e90.band, BandLevel::p90);
  EXPECT_DOUBLE_EQ(e90.lo, busbw_gbps(Op::allreduce, 32, s, p.time_hi_us));
}

TEST(Expectation, ALatencyBoundSizeIsJudgedOnItsTime) {
  const std::uint64_t s = 1024;
  const Prediction p = predicted(s);
  EXPECT_GT(p.latency_share, 0.5);  // 20 us + 5 us x log2 4 against 0.1 us of bytes
  const TimeBandUs b = band_of(p, BandLevel::p99);
  const RowExpectation e = known().judge(kShape, row_of(s, 1.2 * p.time_us));
  EXPECT_EQ(e.metric, ExpectedMetric::time_us);
  EXPECT_DOUBLE_EQ(e.lo, b.lo);
  EXPECT_DOUBLE_EQ(e.hi, b.hi);
  EXPECT_DOUBLE_EQ(e.predicted, p.time_us);
  EXPECT_DOUBLE_EQ(e.measured, 1.2 * p.time_us);
  EXPECT_NEAR(e.shortfall_pct, 20.0, 1e-9);  // 20% more time
}

TEST(Expectation, EachThingTheModelLacksIsNamed) {
  const Expectation ex = known();
  const auto reason = [&](const RunShape& shape, const ResultRow& row, Missing missing) {
    const RowExpectation e = ex.judge(shape, row);
    EXPECT_EQ(e.verdict, Verdict::not_covered) << e.reason;
    EXPECT_EQ(e.missing, missing) << e.reason;
    return e.reason;
  };
  const ResultRow ok = row_of(64ULL << 20, 1000);
  EXPECT_EQ(reason(kShape, row_of(64ULL << 20, 1000, "alltoall"), Missing::op),
            "model known.json has no alltoall on p5en.48xlarge at 4 nodes x 8 ranks: it fits allreduce only");
  EXPECT_EQ(reason({"p9.unknown", 4, 8}, ok, Missing::profile),
            "model known.json has no allreduce on p9.unknown at 4 nodes x 8 ranks: p9.unknown was not measured and has "
            "no spec in configs/instances/aws.yaml (measured: p5en.48xlarge)");
  EXPECT_EQ(reason({"p5en.48xlarge", 4, 4}, row_of(64ULL << 20, 1000, "allreduce", 16), Missing::ranks_per_node),
            "model known.json has no allreduce on p5en.48xlarge at 4 nodes x 4 ranks: allreduce on p5en.48xlarge was "
            "fitted with 8 ranks per node only");
  EXPECT_EQ(reason({"p5en.48xlarge", 16, 8}, row_of(64ULL << 20, 1000, "allreduce", 128), Missing::node_count),
            "model known.json has no allreduce on p5en.48xlarge at 16 nodes x 8 ranks: fitted on 2, 4, 8 node(s)");
  EXPECT_EQ(reason(kShape, row_of(1ULL << 30, 1000), Missing::size_range),
            "model known.json has no allreduce on p5en.48xlarge at 4 nodes x 8 ranks: 1G is outside the sizes "
            "measured at 4 node(s) (1K - 512M)");
  ResultRow bf16 = ok;
  bf16.dtype = "bfloat16";
  EXPECT_EQ(reason(kShape, bf16, Missing::dtype),
            "model known.json has no allreduce on p5en.48xlarge at 4 nodes x 8 ranks: allreduce was fitted on float "
            "only (this row: bfloat16)");
  EXPECT_EQ(reason(kShape, row_of(64ULL << 20, 1000, "allreduce", 1), Missing::row),
            "model known.json has no allreduce on p5en.48xlarge at 4 nodes x 8 ranks: rows of one rank are not "
            "modelled");
  ResultRow grouped = ok;
  grouped.extra["groups"] = {{"spec", "mod:2"}};
  EXPECT_EQ(reason(kShape, grouped, Missing::row),
            "model known.json has no allreduce on p5en.48xlarge at 4 nodes x 8 ranks: rows of concurrent groups "
            "(--groups) are not modelled");
  EXPECT_EQ(reason(kShape, row_of(64ULL << 20, 1000, "frobnicate"), Missing::op),
            "model known.json has no frobnicate on p5en.48xlarge at 4 nodes x 8 ranks: 'frobnicate' is not an op "
            "ccbench knows");
  const Expectation b300_only = known({}, "p6-b300.48xlarge");
  const RowExpectation other = b300_only.judge(kShape, ok);
  EXPECT_EQ(other.missing, Missing::profile);
  EXPECT_EQ(other.reason,
            "model known.json has no allreduce on p5en.48xlarge at 4 nodes x 8 ranks: it is the expectation of "
            "p6-b300.48xlarge only");
}

TEST(Expectation, AModelOfAPercentileJudgesThatLevelOfTheRowOrSaysTheRowLacksIt) {
  nlohmann::json j = known_model().to_json();
  j["percentile"] = 99;
  const Expectation p99(Model::from_json(j, "p99.json"), "p99.json");
  const std::uint64_t s = 64ULL << 20;
  ResultRow r = row_of(s, 1000);
  const RowExpectation lacking = p99.judge(kShape, r);
  EXPECT_EQ(lacking.missing, Missing::statistic);
  EXPECT_EQ(lacking.reason,
            "model p99.json has no allreduce on p5en.48xlarge at 4 nodes x 8 ranks: the model is of the p99 of "
            "per-iteration times, which the row does not carry (measure with ccbench run --percentiles 99)");
  const Prediction p = predicted(s);
  r.extra["percentiles_us"] = {{"p99", {{"value", 2 * p.time_us}, {"ci95", nullptr}}}};
  const RowExpectation judged = p99.judge(kShape, r);
  EXPECT_EQ(judged.verdict, Verdict::below);  // the level, not the median (1000 us), is judged
  EXPECT_DOUBLE_EQ(judged.measured, busbw_gbps(Op::allreduce, 32, s, 2 * p.time_us));
}

TEST(Expectation, OutsideTheFittedNodeCountsOnlyWhenAskedAndThenMarked) {
  const std::uint64_t s = 64ULL << 20;
  const Prediction p = predicted(s, 16);
  EXPECT_TRUE(p.extrapolated);
  const RowExpectation e =
      known({BandLevel::p99, true}).judge({"p5en.48xlarge", 16, 8}, row_of(s, p.time_us, "allreduce", 128));
  EXPECT_EQ(e.verdict, Verdict::normal);
  EXPECT_TRUE(e.extrapolated);
  EXPECT_DOUBLE_EQ(e.hi, busbw_gbps(Op::allreduce, 128, s, band_of(p, BandLevel::p99).lo));
  EXPECT_EQ(to_json(e)["extrapolated"], true);
}

TEST(Expectation, AnUnmeasuredProfileWithASpecIsJudgedFromItAndSaysSo) {
  const std::uint64_t s = 64ULL << 20;
  const Prediction p = predicted(s, 4, "p6-b300.48xlarge");
  ASSERT_TRUE(p.from_spec);
  const RowExpectation e = known().judge({"p6-b300.48xlarge", 4, 8}, row_of(s, p.time_us));
  EXPECT_EQ(e.verdict, Verdict::normal);
  EXPECT_EQ(e.basis, Basis::from_spec);
  EXPECT_DOUBLE_EQ(e.predicted, busbw_gbps(Op::allreduce, 32, s, p.time_us));
  EXPECT_EQ(to_json(e)["basis"], "from spec, not validated");
  // The spec's sizes and node counts are the measured profile's.
  EXPECT_EQ(known().judge({"p6-b300.48xlarge", 16, 8}, row_of(s, 1000, "allreduce", 128)).reason,
            "model known.json has no allreduce on p6-b300.48xlarge at 16 nodes x 8 ranks: fitted on 2, 4, 8 node(s) "
            "of p5en.48xlarge");
}

TEST(Expectation, TheExpectedObjectHasTheDocumentedKeys) {
  const std::uint64_t s = 64ULL << 20;
  const Prediction p = predicted(s);
  const nlohmann::json j = to_json(known().judge(kShape, row_of(s, 1.5 * band_of(p, BandLevel::p99).hi)));
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"band", "basis", "hi", "lo", "measured", "metric", "model", "predicted",
                                            "profile", "shortfall_pct", "verdict"}));
  EXPECT_EQ(j["verdict"], "below");
  EXPECT_EQ(j["metric"], "busbw_gbps");
  EXPECT_EQ(j["band"], "99%");
  EXPECT_EQ(j["basis"], "measured");
  const nlohmann::json nc = to_json(known().judge(kShape, row_of(s, 1000, "alltoall")));
  EXPECT_EQ(nc, (nlohmann::json{{"verdict", "not_covered"},
                                {"model", "known.json"},
                                {"profile", "p5en.48xlarge"},
                                {"missing", "op"},
                                {"reason",
                                 "model known.json has no alltoall on p5en.48xlarge at 4 nodes x 8 ranks: it fits "
                                 "allreduce only"}}));
}

TEST(Expectation, TheRunShapeNeedsTheNodeCountAndDerivesRanksPerNode) {
  ResultFile f;
  f.source = "runs/a.json";
  f.system = {{"instance_type", "p5.48xlarge"}, {"ranks", 16}};
  try {
    run_shape(f);
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(),
                 "runs/a.json: system.nodes: missing; a row is judged at the run's node count (ccbench run records "
                 "it; ccbench import takes --nodes)");
  }
  f.system["nodes"] = 2;
  const RunShape s = run_shape(f);
  EXPECT_EQ(s.profile, "p5.48xlarge");
  EXPECT_EQ(s.nodes, 2);
  EXPECT_EQ(s.ranks_per_node, 8);
}

TEST(Expectation, NamesAndBandsParse) {
  EXPECT_EQ(name(Verdict::not_covered), "not_covered");
  EXPECT_EQ(name(BandLevel::p90), "90%");
  EXPECT_EQ(parse_band("99"), BandLevel::p99);
  EXPECT_EQ(parse_band("90%"), BandLevel::p90);
  EXPECT_EQ(parse_band("95"), std::nullopt);
  EXPECT_EQ(name(Missing::ranks_per_node), "ranks per node");
}

}  // namespace
}  // namespace ccbench::model
