// Test helper: reads {"cases": [{"pairs": [[isolated, congested], ...], "confidence": 0.95,
// "bound": 1.5}]} on stdin and prints the impact factor, its interval and the gate's one-sided p
// for each case as JSON, for test_impact_scipy.py to check against scipy.
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "congestion/impact.hpp"

int main() {
  using nlohmann::json;
  using namespace ccbench::congestion;
  const std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  const json in = json::parse(input);
  json out = json::array();
  std::vector<ImpactRow> rows;
  for (const auto& c : in.at("cases")) {
    const auto pairs = c.at("pairs").get<std::vector<std::pair<double, double>>>();
    const Factor f = impact_factor(pairs, c.value("confidence", 0.95));
    ImpactRow r;
    r.median = f;
    r.p99 = f;
    rows.push_back(r);
  }
  const double bound = in.value("bound", 1.5);
  apply_gate(rows, bound);
  for (const auto& r : rows) {
    const Factor& f = r.median;
    out.push_back({{"estimate", f.estimate},
                   {"ci", f.ci95 ? json::array({f.ci95->first, f.ci95->second}) : json(nullptr)},
                   {"p_gate", f.p_gate ? json(*f.p_gate) : json(nullptr)},
                   {"p_holm", f.p_holm ? json(*f.p_holm) : json(nullptr)}});
  }
  std::cout << json{{"results", out}}.dump() << "\n";
  return 0;
}
