#include "congestion/phases.hpp"

namespace ccbench::congestion {

std::vector<PhaseSpec> phase_plan(int trials, int patterns) {
  std::vector<PhaseSpec> plan;
  for (int t = 0; t < trials; ++t) {
    for (int p = 0; p < patterns; ++p) {
      const bool congested_first = t % 2 == 1;
      plan.push_back({t, p, congested_first});
      plan.push_back({t, p, !congested_first});
    }
  }
  return plan;
}

std::string phase_name(bool congested) { return congested ? "congested" : "isolated"; }

}  // namespace ccbench::congestion
