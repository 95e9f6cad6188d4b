// Result files drawn from a known model (docs/model.md): the known answer of the fit tests and the
// input of benchmarks/model. Header-only so the benchmark can use it too.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/bandwidth.hpp"
#include "core/result.hpp"
#include "core/types.hpp"
#include "model/fit.hpp"

namespace ccbench::model::synthetic {

struct Truth {
  std::vector<Regime> regimes;
  double noise_log = 0.02;  // lognormal sigma of a trial's median
};

// Two regimes: an LL-like one (20 us + 5 us per log2 N, 20 GB/s of bus bandwidth plus 1e-5 us per
// byte a node sends over the network) and a ring-like one (150 us + 30 us per log2 N, 100 GB/s plus
// 4e-6 us per network byte).
inline Truth two_regime_truth() {
  Truth t;
  Regime a;
  a.latency_us = 20;
  a.step_us = 5;
  a.steps = Steps::log2_nodes;
  a.us_per_byte = 1e-3 / 20;
  a.us_per_net_byte = 1e-5;
  Regime b;
  b.latency_us = 150;
  b.step_us = 30;
  b.steps = Steps::log2_nodes;
  b.us_per_byte = 1e-3 / 100;
  b.us_per_net_byte = 4e-6;
  t.regimes = {a, b};
  return t;
}

// One result file: `nodes` x `ranks_per_node`, the given ops and sizes, `trials` rows per size,
// each with a median drawn around the truth and a CI of the noise's width.
inline ResultFile make_file(const Truth& truth, const std::vector<Op>& ops, const std::vector<std::uint64_t>& sizes,
                            int nodes, int ranks_per_node, int trials, const std::string& profile, std::mt19937_64& rng,
                            double link_gbps = 0) {
  ResultFile f;
  f.run.status = "complete";
  f.system = {{"instance_type", profile}, {"nodes", nodes}, {"ranks_per_node", ranks_per_node}};
  f.fabric = nlohmann::json::object();
  if (link_gbps > 0) f.fabric["link_gbps"] = link_gbps;
  f.run.label = profile;
  std::normal_distribution<double> z(0.0, 1.0);
  const int ranks = nodes * ranks_per_node;
  for (Op op : ops) {
    for (std::uint64_t s : sizes) {
      const double t0 = envelope_time_us(truth.regimes, traffic(op, s, nodes, ranks_per_node));
      for (int trial = 0; trial < trials; ++trial) {
        ResultRow r;
        r.op = std::string(name(op));
        r.backend = "mpi";
        r.dtype = "float";
        r.redop = info(op).is_reduction ? "sum" : "none";
        r.bytes = s;
        r.count = s / 4;
        r.ranks = ranks;
        r.trial = trial;
        const double t = t0 * std::exp(truth.noise_log * z(rng));
        r.samples_us = {t * 0.99, t, t * 1.01};
        r.time_us.min = t * 0.99;
        r.time_us.median = t;
        r.time_us.mean = t;
        r.time_us.p99 = t * 1.01;
        r.time_us.max = t * 1.01;
        r.time_us.ci95_lo = t * std::exp(-1.96 * truth.noise_log);
        r.time_us.ci95_hi = t * std::exp(1.96 * truth.noise_log);
        r.algbw_gbps = algbw_gbps(s, t);
        r.busbw_gbps = ccbench::busbw_gbps(op, ranks, s, t);
        f.results.push_back(std::move(r));
      }
    }
  }
  return f;
}

inline std::vector<std::uint64_t> pow2_sizes(std::uint64_t lo, std::uint64_t hi) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = lo; s <= hi; s *= 2) out.push_back(s);
  return out;
}

}  // namespace ccbench::model::synthetic
