// Reads whitespace-separated samples from stdin and prints ccbench's statistics as JSON, so
// stats_vs_scipy.py can hold them against SciPy's.
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/stats.hpp"

int main() {
  std::vector<double> values;
  double v = 0;
  while (std::cin >> v) values.push_back(v);
  const auto s = ccbench::stats::summarize(values);
  const auto [lo, hi] = ccbench::stats::median_ci_indices(values.size(), 0.95);
  const nlohmann::json out = {{"n", s.n},       {"min", s.min},     {"median", s.median}, {"mean", s.mean},
                              {"p99", s.p99},   {"max", s.max},     {"ci_lo", s.ci_lo},   {"ci_hi", s.ci_hi},
                              {"ci_lo_index", lo}, {"ci_hi_index", hi}};
  std::cout << out.dump() << "\n";
  return 0;
}
