// Test helper: answers compare's moderated-spread functions (src/compare/moderated_spread.hpp) as
// JSON for test_moderated_scipy.py to check against SciPy. Reads one JSON object on stdin:
//   {"gamma": [x...], "inverse_trigamma": [y...], "priors": [{"variances": [...], "dfs": [...]}],
//    "quantiles": [{"p": p, "df": df}], "tables": [{"baseline": [[...]], "candidate": [[...]]}]}
// (null in a table is a launch without that size) and prints the answers in the same shape.
#include <cmath>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "compare/moderated_spread.hpp"

namespace {

using nlohmann::json;
using namespace ccbench::compare;

json prior_json(const SpreadPrior& p) {
  return {{"df", std::isinf(p.df) ? json("inf") : json(p.df)}, {"variance", p.variance}};
}

std::vector<std::vector<double>> table_rows(const json& rows) {
  std::vector<std::vector<double>> out;
  for (const auto& row : rows) {
    std::vector<double> r;
    for (const auto& v : row) r.push_back(v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>());
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

int main() {
  const json in = json::parse(std::cin);
  json out = json::object();
  out["gamma"] = json::array();
  for (double x : in.value("gamma", json::array())) {
    out["gamma"].push_back({{"digamma", digamma(x)}, {"trigamma", trigamma(x)}, {"tetragamma", tetragamma(x)}});
  }
  out["inverse_trigamma"] = json::array();
  for (double y : in.value("inverse_trigamma", json::array())) out["inverse_trigamma"].push_back(inverse_trigamma(y));
  out["priors"] = json::array();
  for (const auto& p : in.value("priors", json::array())) {
    const auto v = p.at("variances").get<std::vector<double>>(), d = p.at("dfs").get<std::vector<double>>();
    out["priors"].push_back(prior_json(estimate_prior(v, d)));
  }
  out["quantiles"] = json::array();
  for (const auto& q : in.value("quantiles", json::array())) {
    out["quantiles"].push_back(student_t_quantile(q.at("p").get<double>(), q.at("df").get<double>()));
  }
  out["tables"] = json::array();
  for (const auto& t : in.value("tables", json::array())) {
    TrialLogs logs{table_rows(t.at("baseline")), table_rows(t.at("candidate"))};
    const ModeratedShifts m = moderated_shifts(logs, Spread::moderated);
    json sizes = json::array();
    for (const auto& s : m.sizes) {
      sizes.push_back(s ? json{{"estimate", s->estimate},
                               {"se", s->se},
                               {"df", s->df},
                               {"se_alt", s->se_alt},
                               {"df_alt", s->df_alt},
                               {"upper_width_0.001", s->width(0.999)}}
                        : json(nullptr));
    }
    out["tables"].push_back({{"sizes", sizes},
                             {"baseline", prior_json(m.baseline)},
                             {"candidate", prior_json(m.candidate)},
                             {"pooled", prior_json(m.pooled)}});
  }
  std::cout << out.dump() << "\n";
  return 0;
}
