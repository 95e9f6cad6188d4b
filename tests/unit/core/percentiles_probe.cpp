// Reads whitespace-separated samples from stdin and prints, for every level given in percent on the
// command line, ccbench's percentile, its interval's order-statistic indices and the sample counts
// it needs, as JSON, so percentiles_vs_scipy.py can hold them against NumPy's and SciPy's.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/percentiles.hpp"

int main(int argc, char** argv) {
  std::vector<double> values;
  double v = 0;
  while (std::cin >> v) values.push_back(v);
  std::ranges::sort(values);
  std::vector<double> levels;
  for (int i = 1; i < argc; ++i) levels.push_back(std::strtod(argv[i], nullptr));
  namespace pc = ccbench::percentiles;
  nlohmann::json out = {{"row", pc::to_json(values, levels)}, {"levels", nlohmann::json::object()}};
  for (const double p : levels) {
    const auto ci = pc::ci_indices(values.size(), p);
    out["levels"][pc::key(p)] = {
        {"ci_indices", ci ? nlohmann::json::array({ci->first, ci->second}) : nlohmann::json(nullptr)},
        {"min_samples_for_ci", pc::min_samples_for_ci(p)},
        {"min_samples_for_estimate", pc::min_samples_for_estimate(p)},
    };
  }
  std::cout << out.dump() << "\n";
  return 0;
}
