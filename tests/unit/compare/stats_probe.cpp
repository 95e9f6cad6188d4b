// Test helper: reads {"cases": [{"x": [...], "y": [...], "confidence": 0.95}]} on stdin and prints
// the comparator's statistics for each case as JSON, for test_stats_scipy.py to check against scipy.
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "compare/max_critical.hpp"
#include "compare/statistics.hpp"
#include "compare/trial_stats.hpp"
#include "core/stats.hpp"

int main() {
  using nlohmann::json;
  using namespace ccbench;
  const std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  const json in = json::parse(input);
  json out = json::array();
  for (const auto& c : in.at("cases")) {
    const auto x = c.at("x").get<std::vector<double>>();
    const auto y = c.at("y").get<std::vector<double>>();
    const double conf = c.value("confidence", 0.95);
    json r;
    const auto mw = compare::mann_whitney(x, y);
    r["u"] = mw.u_x;
    r["p_auto"] = mw.p_value;
    r["exact"] = mw.exact;
    r["p_asymptotic"] = compare::mann_whitney_asymptotic(x, y).p_value;
    if (x.size() * y.size() <= compare::kExactMaxProduct) r["p_exact"] = compare::mann_whitney_exact(x, y).p_value;
    const auto w = compare::welch_t_test(x, y);
    r["welch_t"] = w.t;
    r["welch_df"] = w.df;
    r["welch_p"] = w.p_value;
    const auto hl = compare::hodges_lehmann(x, y, conf);
    r["hl"] = hl.estimate;
    r["k"] = compare::mann_whitney_ci_rank(x.size(), y.size(), conf);
    r["ci"] = hl.ci ? json::array({hl.ci->first, hl.ci->second}) : json(nullptr);
    // Trial-level t (docs/compare.md "Method"): estimate, se, df, interval, one-sided p against a
    // bound, the max interval of two sizes (x vs y, y vs x), the trend of x in order.
    if (const auto t = compare::t_shift(x, y)) {
      const double bound = c.value("bound", 0.0);
      const auto ci = t->interval(conf);
      const std::vector<compare::TShift> two = {*t, compare::TShift{-t->estimate, t->se, t->df, t->se_alt, t->df_alt}};
      const auto mx = compare::max_interval(two, (1.0 - conf) / 4.0, (1.0 - conf) / 2.0);  // Bonferroni over 2
      r["t_shift"] = {{"estimate", t->estimate},
                      {"se", t->se},
                      {"df", t->df},
                      {"se_alt", t->se_alt},
                      {"df_alt", t->df_alt},
                      {"ci", {ci.first, ci.second}},
                      {"p_below", t->p_below(bound)},
                      {"p_above", t->p_above(bound)},
                      {"p_two_sided", t->p_two_sided()},
                      {"max_ci", {mx.first, mx.second}},
                      {"bound", bound}};
    }
    // The max's simultaneous level from launches given as [size][trial] log medians of both sides.
    if (c.contains("logs_base")) {
      compare::TrialLogs logs{c.at("logs_base").get<std::vector<std::vector<double>>>(),
                              c.at("logs_cand").get<std::vector<std::vector<double>>>()};
      const auto crit = compare::max_critical(logs, c.value("resamples", 20000), 7);
      r["max_level"] = crit.per_size_level(c.value("tail", 0.025));
      r["max_sizes"] = crit.sizes;
    }
    if (const auto tr = compare::linear_trend(x)) r["trend"] = {{"slope", tr->slope}, {"p", tr->p_value}};
    if (const auto tr = compare::common_trend(x, y)) r["common_trend"] = {{"slope", tr->slope}, {"p", tr->p_value}};
    r["t_quantile"] = compare::student_t_quantile(conf, static_cast<double>(x.size()));
    const auto [lo, hi] = stats::median_ci_indices(x.size(), conf);
    r["median_ci_indices"] = json::array({lo, hi});
    out.push_back(r);
  }
  std::cout << json{{"results", out}}.dump() << "\n";
  return 0;
}
