// The fit of the point-to-point and rooted ops (sendrecv, gather, scatter, reduce) and of the matrix
// ops against their most loaded rank's bytes (docs/model.md, "What is fitted"): noiseless rows drawn
// from one known regime, so the coefficients come back exactly and predictions are checked by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "model/fit.hpp"
#include "model/model.hpp"
#include "synthetic.hpp"

namespace ccbench::model {
namespace {

constexpr double kLatencyUs = 12;
constexpr double kUsPerByte = 1.0 / 50e3;  // 50 GB/s

FitOptions quick() {
  FitOptions opt;
  opt.refits = 5;
  opt.cross_validate = false;
  return opt;
}

std::vector<Observation> rows_of(const ResultFile& f) { return observations(f); }

TEST(ModelFitNewOps, PointToPointAndRootedOpsFitTheirOwnSizeCurves) {
  synthetic::Truth truth;
  truth.noise_log = 0;
  Regime r;
  r.latency_us = kLatencyUs;
  r.us_per_byte = kUsPerByte;
  truth.regimes = {r};
  std::mt19937_64 rng(3);
  ResultFile f = synthetic::make_file(truth, {Op::sendrecv, Op::gather, Op::scatter, Op::reduce},
                                      synthetic::pow2_sizes(1024, 64ULL << 20), 1, 8, 1, "p5.48xlarge", rng);
  f.source = "p2p.json";
  const Model m = fit(rows_of(f), quick(), {"p2p.json"});
  const auto groups = fitted_groups(m);
  ASSERT_EQ(groups.size(), 4u);
  for (const auto& g : groups) {
    SCOPED_TRACE(std::string(name(g.summary.op)));
    ASSERT_EQ(g.regimes.size(), 1u);
    EXPECT_NEAR(g.regimes[0].value.latency_us, kLatencyUs, 1e-6 * kLatencyUs);
    EXPECT_NEAR(g.regimes[0].value.us_per_byte, kUsPerByte, 1e-6 * kUsPerByte);
  }
  // By hand: a gather of 1 MiB on 8 ranks moves 7/8 of S over the bus; a sendrecv moves S.
  const double mib = 1 << 20;
  const Prediction gather = m.predict({Op::gather, 1 << 20, 1, 8, "p5.48xlarge"});
  EXPECT_NEAR(gather.time_us, kLatencyUs + mib * 7 / 8 * kUsPerByte, 1e-6);
  EXPECT_NEAR(gather.busbw_gbps, mib / (gather.time_us * 1e3) * 7 / 8, 1e-9);
  const Prediction sendrecv = m.predict({Op::sendrecv, 1 << 20, 1, 0, "p5.48xlarge"});
  EXPECT_NEAR(sendrecv.time_us, kLatencyUs + mib * kUsPerByte, 1e-6);
  EXPECT_EQ(sendrecv.ranks_per_node, 8);
}

// A moe_dispatch row of mean size S whose most loaded rank sends L off-rank bytes.
ResultRow dispatch_row(std::uint64_t mean_bytes, double imbalance, double time_us) {
  ResultRow row;
  row.op = "moe_dispatch";
  row.bytes = mean_bytes;
  row.ranks = 8;
  row.time_us.median = time_us;
  const auto most_loaded = static_cast<std::uint64_t>(std::llround(imbalance * static_cast<double>(mean_bytes)));
  row.extra["matrix"] = {{"imbalance", imbalance}, {"most_loaded_off_rank_bytes", most_loaded}};
  return row;
}

TEST(ModelFitNewOps, MatrixOpsAreFittedAgainstTheMostLoadedRanksBytes) {
  ResultFile f;
  f.source = "moe.json";
  f.system = {{"instance_type", "p5.48xlarge"}, {"nodes", 1}, {"ranks_per_node", 8}};
  // Even and hot routings of the same mean sizes: the time follows L = imbalance x S, not S.
  for (std::uint64_t s = 4096; s <= (16ULL << 20); s *= 4)
    for (double imbalance : {1.0, 3.0})
      f.results.push_back(dispatch_row(s, imbalance, kLatencyUs + imbalance * static_cast<double>(s) * kUsPerByte));
  ResultRow no_matrix = dispatch_row(4096, 1, 50);  // cannot be placed: skipped
  no_matrix.extra = nlohmann::json::object();
  f.results.push_back(no_matrix);
  const auto obs = observations(f);
  ASSERT_EQ(obs.size(), f.results.size() - 1);
  EXPECT_EQ(obs[1].bytes, 3u * 4096u);

  const Model m = fit(obs, quick(), {"moe.json"});
  const auto groups = fitted_groups(m);
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].regimes.size(), 1u);
  EXPECT_NEAR(groups[0].regimes[0].value.latency_us, kLatencyUs, 1e-6 * kLatencyUs);
  EXPECT_NEAR(groups[0].regimes[0].value.us_per_byte, kUsPerByte, 1e-6 * kUsPerByte);
  // A hot routing of mean 1 MiB at imbalance 2.5: L = 2.5 MiB; the bandwidth is L / t.
  const double l = 2.5 * (1 << 20);
  const Prediction p = m.predict({Op::moe_dispatch, static_cast<std::uint64_t>(l), 1, 8, "p5.48xlarge"});
  EXPECT_NEAR(p.time_us, kLatencyUs + l * kUsPerByte, 1e-6);
  EXPECT_NEAR(p.busbw_gbps, l / (p.time_us * 1e3), 1e-9);
}

}  // namespace
}  // namespace ccbench::model
