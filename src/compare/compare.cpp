#include "compare/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "compare/analyse.hpp"
#include "compare/load.hpp"
#include "compare/normalise.hpp"
#include "compare/step.hpp"
#include "compare/summarise.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"

namespace ccbench::compare {

std::string format_key(const RowKey& key) {
  std::string s = fmt::format("{} {}", key.op, format_bytes(key.bytes));
  if (key.in_place) s += " in-place";
  if (key.dtype != "float") s += " " + key.dtype;
  if (!key.matrix.empty()) s += " (" + key.matrix + ")";
  return s;
}

std::string_view name(Unit unit) { return unit == Unit::trials ? "trials" : "samples"; }
std::string_view name(GateTest test) {
  return test == GateTest::welch_t ? "welch_t" : test == GateTest::pooled_t ? "pooled_t" : "none";
}
std::string_view name(CiMethod method) { return method == CiMethod::t ? "t" : ""; }

namespace {

Scope effective_scope(const CompareOptions& o) {
  Scope s = o.scope;
  if (o.claim) {
    if (s.ops.empty()) s.ops = o.claim->ops;
    if (o.claim->min_bytes) s.min_bytes = std::max(s.min_bytes, *o.claim->min_bytes);
    if (o.claim->max_bytes) s.max_bytes = std::min(s.max_bytes, *o.claim->max_bytes);
  }
  return s;
}

// The settings a comparison reports, before any data is looked at.
Comparison start(const CompareOptions& o) {
  Comparison c;
  c.claim = o.claim;
  c.gate = o.gate;
  c.metric = o.claim ? o.claim->metric : o.metric;
  c.row_percentile = o.row_percentile;
  c.min_trials = o.min_trials;
  c.alpha = o.alpha;
  c.normalize = o.normalize.value_or(o.claim ? o.claim->normalize : Normalize::none);
  c.summary.statistic = o.claim ? o.claim->statistic : o.statistic;
  c.summary.seed = o.seed;
  c.summary.resamples = o.resamples;
  if (c.summary.statistic == Statistic::step) {
    // The step row's bytes sum different calls' buffers: a rate of it means nothing, its time does.
    c.metric = Metric::time;
    if (c.claim) c.claim->metric = Metric::time;
  }
  return c;
}

}  // namespace

Comparison compare_sides(const Side& baseline, const Side& candidate, const CompareOptions& o) {
  if (o.claim && o.gate) throw UsageError("give either a claim or --gate, not both");
  check_allow_mismatch_keys(o.allow_mismatch);
  Comparison c = start(o);
  const bool step = c.summary.statistic == Statistic::step;
  if (step) c.trace_sha256 = check_step_sides(baseline, candidate);
  const Scope scope = step ? step_scope(o.scope, o.claim ? &*o.claim : nullptr) : effective_scope(o);

  // Match: rows by key, and the sides' metadata (comparability, claim requirements, links).
  const Matched m = match_sides(baseline, candidate, scope, o.row_percentile);
  c.only_in_baseline = m.only_in_baseline;
  c.only_in_candidate = m.only_in_candidate;
  if (m.time_only_left_out > 0)
    c.warnings.push_back(
        fmt::format("left out {} checkpoint_commit row(s): a commit carries a time, not a bandwidth "
                    "(--ops checkpoint_commit compares them alone)",
                    m.time_only_left_out));
  const MetadataReport meta =
      check_metadata(baseline, candidate, scope, o.allow_mismatch, o.claim ? &*o.claim : nullptr);
  c.differences = meta.differences;
  c.mismatches = meta.mismatches;
  c.baseline = {baseline.inputs, baseline.files.size(), m.baseline_trials, meta.baseline_link_gbps};
  c.candidate = {candidate.inputs, candidate.files.size(), m.candidate_trials, meta.candidate_link_gbps};
  // The look is the launch count (the smaller side's); a claim's first look its --min-trials.
  c.summary.looks =
      look_rule(o.looks, o.gate ? kMinFirstLook : o.min_trials, std::min(m.baseline_trials, m.candidate_trials));
  const Normalisation norm = normalise(c.normalize, meta, c.warnings);
  c.warnings.insert(c.warnings.end(), meta.warnings.begin(), meta.warnings.end());

  // Analyse each size, summarise across sizes, decide.
  c.rows = analyse(m, o.min_trials, o.alpha, norm.factor);
  summarise(m, c.rows, SummaryOptions{o.resamples, o.seed, o.spread}, c.summary, c.warnings);
  apply_normalisation(c.summary, norm);
  data_warnings(c, baseline, candidate, o.min_trials, c.warnings);
  decide(c, o, meta, norm);
  return c;
}

bool drift_detected(const Summary& s) {
  auto on = [](const std::optional<SideTrend>& t) { return t && t->detected; };
  return on(s.drift) || on(s.baseline_trend) || on(s.candidate_trend);
}

double drift_bias_log(const Comparison& c) {
  const auto& s = c.summary;
  double slope = 0;
  for (const auto* t : {&s.drift, &s.baseline_trend, &s.candidate_trend}) {
    if (*t && (*t)->detected) slope = std::max(slope, std::abs((*t)->slope_per_launch));
  }
  return slope * static_cast<double>(c.baseline.trials + c.candidate.trials) / 2.0;
}

Comparison compare_runs(const CompareOptions& options) {
  const Side baseline = load_side("baseline", options.baseline);
  const Side candidate = load_side("candidate", options.candidate);
  return compare_sides(baseline, candidate, options);
}

}  // namespace ccbench::compare
