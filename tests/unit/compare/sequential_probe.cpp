// Test helper: prints compare's sequential per-look levels (src/compare/sequential.hpp) as JSON for
// test_sequential_scipy.py to check against SciPy. Arguments: pairs of overall tail and first look;
// prints the level at every look from the first to the last.
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "compare/sequential.hpp"

int main(int argc, char** argv) {
  nlohmann::json out = nlohmann::json::array();
  for (int i = 1; i + 1 < argc; i += 2) {
    const double tail = std::strtod(argv[i], nullptr);
    const int first_look = std::atoi(argv[i + 1]);
    nlohmann::json levels = nlohmann::json::array(), round_trip = nlohmann::json::array();
    for (int look = first_look; look <= ccbench::compare::kLastLook; ++look) {
      const double level = ccbench::compare::per_look_level(tail, first_look, look);
      levels.push_back(level);
      round_trip.push_back(ccbench::compare::sequential_p(level, first_look, look));
    }
    out.push_back({{"tail", tail},
                   {"first_look", first_look},
                   {"last_look", ccbench::compare::kLastLook},
                   {"per_look", levels},
                   {"round_trip", round_trip}});
  }
  std::cout << out.dump() << "\n";
  return 0;
}
