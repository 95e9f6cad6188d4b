#include "generate.hpp"

#include <cmath>
#include <random>

#include "core/bandwidth.hpp"
#include "core/stats.hpp"
#include "core/types.hpp"

namespace ccbench::testing {

ResultFile make_result_file(const RunModel& m) {
  std::mt19937_64 rng(m.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  ResultFile f;
  f.run.status = "complete";
  f.source = "generated-" + std::to_string(m.seed);
  f.system = {{"instance_type", m.instance_type}, {"ranks", m.ranks}, {"ranks_per_node", m.ranks_per_node}};
  f.fabric = {{"generation", m.generation}, {"provider", "efa"}};
  if (m.link_gbps) f.fabric["link_gbps"] = *m.link_gbps;
  f.config = {{"timing", {{"method", m.timing}}}, {"iters", "auto"}, {"ops", m.ops}};
  for (int t = 0; t < m.trials; ++t) {
    const double trial_factor = std::exp(m.trial_sigma * normal(rng));
    for (const auto& op : m.ops) {
      for (auto b : m.sizes) {
        const double factor = bus_factor(*parse_op(op), m.ranks);
        const double base = 20.0 + static_cast<double>(b) * factor / (300.0 * 1e3);
        const double med = base * trial_factor / m.ratio(op, b);
        ResultRow r;
        r.op = op;
        r.backend = "nccl";
        r.dtype = "float";
        r.redop = op == "allreduce" ? "sum" : "none";
        r.bytes = b;
        r.ranks = m.ranks;
        r.trial = t;
        for (int s = 0; s < m.samples; ++s) r.samples_us.push_back(med * std::exp(m.sigma * normal(rng)));
        const auto sum = stats::summarize(r.samples_us);
        r.time_us.median = sum.median;
        r.ci_target_met = true;
        f.results.push_back(std::move(r));
      }
    }
  }
  return f;
}

compare::Side make_side(const std::string& name, const RunModel& model) {
  compare::Side s;
  s.name = name;
  s.inputs = {name};
  s.files.push_back(make_result_file(model));
  return s;
}

}  // namespace ccbench::testing
