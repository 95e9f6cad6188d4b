#include <fmt/format.h>

#include <cmath>

#include "compare/render.hpp"
#include "core/percentiles.hpp"

namespace ccbench::compare {

namespace {

using nlohmann::json;

json interval(const std::optional<compare::Interval>& ci, double k = 1.0) {
  if (!ci) return nullptr;
  return json::array({ci->first * k, ci->second * k});
}

json key_json(const compare::RowKey& k) {
  json out = {{"op", k.op},       {"dtype", k.dtype}, {"redop", k.redop}, {"in_place", k.in_place},
              {"bytes", k.bytes}, {"ranks", k.ranks}};
  if (!k.matrix.empty()) out["matrix"] = k.matrix;  // matrix ops only: the traffic the row measured
  return out;
}

json side_json(const compare::SideAtSize& s) {
  return {{"median_us", s.median_us},
          {"ci95_us", interval(s.ci_us)},
          {"busbw_gbps", s.busbw_gbps},
          {"busbw_ci95_gbps", interval(s.busbw_ci)},
          {"samples", s.samples},
          {"trials", s.trials},
          {"samples_kind", s.summary ? "summary" : "raw"},
          {"ci_target_not_met_rows", s.rows_ci_not_met},
          {"wrong", s.wrong}};
}

json statistic_json(const compare::StatisticValue& v) {
  json j = {{"ratio", v.ratio}, {"ci", interval(v.ci95)}, {"ci90", interval(v.ci90)}};
  if (v.p_value) j["p_value"] = *v.p_value;
  if (v.at) j["at"] = key_json(*v.at);
  return j;
}

}  // namespace

nlohmann::json compare_to_json(const compare::Comparison& c) {
  json out;
  out["verdict"] = compare::name(c.verdict);
  out["exit_code"] = compare::exit_code(c.verdict);
  out["reason"] = c.reason;
  if (c.claim) {
    const auto& k = *c.claim;
    json claim = {{"statement", k.statement},
                  {"source", k.source},
                  {"file", k.file},
                  {"metric", compare::name(k.metric)},
                  {"expected_speedup", k.expected_speedup},
                  {"expected_ratio", k.expected_ratio()},
                  {"tolerance", k.tolerance},
                  {"band", json::array({k.lower(), k.upper()})},
                  {"statistic", compare::name(k.statistic)},
                  {"ops", k.ops},
                  {"min_bytes", k.min_bytes ? json(*k.min_bytes) : json(nullptr)},
                  {"max_bytes", k.max_bytes ? json(*k.max_bytes) : json(nullptr)},
                  {"normalize", compare::name(c.normalize)},
                  {"baseline", k.baseline},
                  {"candidate", k.candidate}};
    if (k.expected_time_reduction) claim["expected_time_reduction"] = *k.expected_time_reduction;
    out["claim"] = claim;
  } else {
    out["claim"] = nullptr;
  }
  if (c.gate) {
    out["gate"] = {{"kind", "regression"},
                   {"threshold", c.gate->threshold},
                   {"alpha", c.gate->alpha},
                   {"failures", c.gate_failures},
                   {"geomean_regression", c.geomean_regression}};
  }
  const auto& s = c.summary;
  const auto& used = s.used_normalised();
  const auto& raw = s.used();
  json summary = {{"statistic", compare::name(s.statistic)},
                  {"metric", compare::name(c.metric)},
                  {"ratio", used.ratio},
                  {"ci", interval(used.ci95)},
                  {"ci90", interval(used.ci90)},
                  {"sizes", s.sizes},
                  {"seed", s.seed},
                  {"resamples", s.resamples},
                  {"normalize", compare::name(c.normalize)},
                  {"geomean", statistic_json(s.geomean_used)},
                  {"max", statistic_json(s.max_used)},
                  {"trials", {{"baseline", c.baseline.trials}, {"candidate", c.candidate.trials}}},
                  {"min_trials", c.min_trials},
                  {"ci_method", compare::name(s.ci_method)},
                  {"looks", compare::name(s.looks.looks)},
                  {"spread", compare::name(s.spread)}};
  // The moderated spread's priors (df null when infinite: every size at the shared spread).
  if (s.spread == compare::Spread::moderated && !s.max_shifts.empty()) {
    auto prior = [](const compare::SpreadPrior& p) {
      return json{{"df", std::isinf(p.df) ? json(nullptr) : json(p.df)}, {"variance", p.variance}};
    };
    summary["spread_prior"] = {{"baseline", prior(s.spread_prior_baseline)},
                               {"candidate", prior(s.spread_prior_candidate)},
                               {"pooled", prior(s.spread_prior_pooled)}};
  }
  // The sequential rule's boundary: its looks, this comparison's look, and the one-sided levels at it
  // of the 95% and 90% intervals' sides (0.025 and 0.05 with one look).
  summary["boundary"] = s.looks.looks == compare::Looks::once
                            ? json(nullptr)
                            : json{{"kind", "wang_tsiatis"},
                                   {"shape", compare::kShape},
                                   {"first_look", s.looks.first_look},
                                   {"last_look", s.looks.last_look},
                                   {"look", s.looks.look},
                                   {"level", {{"ci", s.looks.per_look(0.025)}, {"ci90", s.looks.per_look(0.05)}}}};
  // --statistic pNN: the per-size statistic (each trial's pNN, and the sides' pooled pNN).
  if (c.row_percentile) summary["row_statistic"] = percentiles::key(*c.row_percentile);
  const bool links_known = c.baseline.link_gbps && c.candidate.link_gbps;
  if (links_known) summary["link_gbps"] = json::array({*c.baseline.link_gbps, *c.candidate.link_gbps});
  if (s.normalized || (links_known && *c.baseline.link_gbps != *c.candidate.link_gbps)) {
    summary["raw"] = {{"ratio", raw.ratio}, {"ci", interval(raw.ci95)}, {"ci90", interval(raw.ci90)}};
    const compare::StatisticValue& n = s.link_normalised ? *s.link_normalised : raw;
    summary["normalized"] = {{"ratio", n.ratio},
                             {"ci", interval(n.ci95)},
                             {"ci90", interval(n.ci90)},
                             {"factor", s.link_factor.value_or(1.0)}};
  }
  if (s.statistic == compare::Statistic::step) {
    summary["step"] = statistic_json(s.geomean_used);
    summary["step"]["trace_sha256"] = c.trace_sha256;
  }
  if (c.trials_needed) summary["trials_needed"] = *c.trials_needed;
  summary["drift_changed_verdict"] = c.drift_changed_verdict;
  if (s.ci_method == compare::CiMethod::t) {
    summary["max"]["lower_level"] = {{"ci", s.max_lower_level95}, {"ci90", s.max_lower_level90}};
  }
  out["summary"] = summary;
  json rows = json::array();
  for (const auto& r : c.rows) {
    json row = key_json(r.key);
    row["ratio"] = r.ratio;
    row["ci"] = interval(r.ci);
    row["ratio_raw"] = r.ratio_raw;
    row["ci_raw"] = interval(r.ci_raw);
    row["p_value"] = r.p_value;
    row["p_exact"] = r.mw_exact;
    row["significant"] = r.significant;
    row["unit"] = compare::name(r.unit);
    if (r.p_holm) {
      row["p_gate"] = r.p_gate;
      row["gate_test"] = compare::name(r.gate_test);
      row["p_holm"] = *r.p_holm;
      row["regression"] = r.regression;
    }
    row["baseline"] = side_json(r.baseline);
    row["candidate"] = side_json(r.candidate);
    rows.push_back(std::move(row));
  }
  out["rows"] = rows;
  json diffs = json::object();
  for (const auto& d : c.differences) diffs[d.key] = json::array({d.baseline, d.candidate});
  out["differences"] = diffs;
  out["mismatches"] = c.mismatches;
  out["warnings"] = c.warnings;
  json only_b = json::array(), only_c = json::array();
  for (const auto& k : c.only_in_baseline) only_b.push_back(key_json(k));
  for (const auto& k : c.only_in_candidate) only_c.push_back(key_json(k));
  out["only_in_baseline"] = only_b;
  out["only_in_candidate"] = only_c;
  out["inputs"] = {{"baseline", c.baseline.inputs}, {"candidate", c.candidate.inputs}};
  return out;
}

std::string render_compare_json(const compare::Comparison& c) { return compare_to_json(c).dump(2) + "\n"; }

}  // namespace ccbench::compare
