#include "model/expectation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_depth.hpp"
#include "core/percentiles.hpp"
#include "core/run_metadata.hpp"
#include "core/sizes.hpp"
#include "core/types.hpp"
#include "model/fit.hpp"
#include "model/model_impl.hpp"
#include "system/instance_profile.hpp"

namespace ccbench::model {

using json = nlohmann::json;

std::string_view name(Verdict verdict) {
  switch (verdict) {
    case Verdict::normal:
      return "normal";
    case Verdict::below:
      return "below";
    case Verdict::above:
      return "above";
    case Verdict::not_covered:
      return "not_covered";
  }
  return "not_covered";
}

std::string_view name(ExpectedMetric metric) {
  switch (metric) {
    case ExpectedMetric::busbw_gbps:
      return "busbw_gbps";
    case ExpectedMetric::most_loaded_gbps:
      return "most_loaded_gbps";
    case ExpectedMetric::time_us:
      return "time_us";
  }
  return "busbw_gbps";
}

std::string_view name(BandLevel band) { return band == BandLevel::p90 ? "90%" : "99%"; }

std::string_view name(Basis basis) { return basis == Basis::measured ? "measured" : "from spec, not validated"; }

std::string_view name(Missing missing) {
  switch (missing) {
    case Missing::none:
      return "";
    case Missing::row:
      return "row";
    case Missing::op:
      return "op";
    case Missing::profile:
      return "profile";
    case Missing::ranks_per_node:
      return "ranks per node";
    case Missing::node_count:
      return "node count";
    case Missing::dtype:
      return "dtype";
    case Missing::size_range:
      return "size range";
    case Missing::statistic:
      return "statistic";
  }
  return "";
}

std::optional<BandLevel> parse_band(std::string_view text) {
  if (text == "90" || text == "90%") return BandLevel::p90;
  if (text == "99" || text == "99%") return BandLevel::p99;
  return std::nullopt;
}

TimeBandUs band_of(const Prediction& p, BandLevel band) {
  if (band == BandLevel::p90 || !(p.time_us > 0)) return {p.time_lo_us, p.time_hi_us};
  constexpr double kScale = kZ99 / kZ90;
  return {p.time_us * std::pow(p.time_lo_us / p.time_us, kScale),
          p.time_us * std::pow(p.time_hi_us / p.time_us, kScale)};
}

RunShape run_shape(const ResultFile& file) {
  const RunFacts facts = run_facts(file);
  if (facts.nodes <= 0)
    throw ParseError(fmt::format(
        "{}: system.nodes: missing; a row is judged at the run's node count (ccbench run records it; ccbench "
        "import takes --nodes)",
        file.source.empty() ? std::string("result") : file.source));
  RunShape s;
  s.profile = facts.profile;
  s.nodes = facts.nodes;
  s.ranks_per_node = facts.ranks_per_node;
  if (s.ranks_per_node <= 0) {
    const auto ranks = RunMetadata(file).ranks();
    if (ranks && *ranks > 0 && *ranks % s.nodes == 0) s.ranks_per_node = static_cast<int>(*ranks / s.nodes);
  }
  return s;
}

Expectation::Expectation(Model model, std::string name, JudgeOptions options, std::optional<std::string> only_profile)
    : model_(std::move(model)), name_(std::move(name)), options_(options), only_profile_(std::move(only_profile)) {}

Expectation Expectation::load(const std::string& model_path, JudgeOptions options) {
  Model m = Model::load(model_path);
  // Model::load has parsed and checked the file; the expectation's own key is read here (the model
  // ignores keys it does not know).
  const json j = json::parse(read_input_file(model_path));
  std::optional<std::string> only;
  if (const auto e = j.find("expectation"); e != j.end()) {
    if (!e->is_object()) throw ParseError(fmt::format("{}: expectation: must be an object", model_path));
    if (const auto p = e->find("profile"); p != e->end()) {
      if (!p->is_string() || p->get<std::string>().empty())
        throw ParseError(fmt::format("{}: expectation/profile: must be a non-empty string", model_path));
      only = p->get<std::string>();
    }
  }
  return Expectation(std::move(m), model_path, options, std::move(only));
}

namespace {

// The statistic of the row the model's curve is of: the median time (as model fit reads it), or the
// row's percentiles_us level. nullopt: the row does not carry it.
std::optional<double> row_time_us(const ResultRow& row, double percentile) {
  if (percentile > 0) {
    const auto all = row.extra.find("percentiles_us");
    if (all == row.extra.end() || !all->is_object()) return std::nullopt;
    const auto level = all->find(percentiles::key(percentile));
    if (level == all->end() || !level->is_object()) return std::nullopt;
    const auto value = level->find("value");
    if (value == level->end() || !value->is_number() || !(value->get<double>() > 0)) return std::nullopt;
    return value->get<double>();
  }
  double t = row.time_us.median;
  if (!(t > 0) && !row.samples_us.empty()) {
    auto s = row.samples_us;
    std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2), s.end());
    t = s[s.size() / 2];
  }
  if (!(t > 0) || !std::isfinite(t)) return std::nullopt;
  return t;
}

std::string node_list(const std::vector<int>& nodes) { return fmt::format("{}", fmt::join(nodes, ", ")); }

}  // namespace

RowExpectation Expectation::judge(const ResultFile& file, const ResultRow& row) const {
  return judge(run_shape(file), row);
}

RowExpectation Expectation::judge(const RunShape& shape, const ResultRow& row) const {
  RowExpectation out;
  out.model = name_;
  out.profile = shape.profile;
  out.band = options_.band;
  const int nodes = std::max(1, shape.nodes);
  const int rpn = shape.ranks_per_node > 0 ? shape.ranks_per_node : std::max(1, row.ranks / nodes);
  const auto op = parse_op(row.op);
  const std::string op_name = op ? std::string(ccbench::name(*op)) : row.op;
  const std::string where = fmt::format("model {} has no {} on {} at {} node{} x {} rank{}", name_, op_name,
                                        shape.profile, nodes, nodes == 1 ? "" : "s", rpn, rpn == 1 ? "" : "s");
  const auto not_covered = [&](Missing missing, const std::string& detail) {
    out.verdict = Verdict::not_covered;
    out.missing = missing;
    out.reason = where + ": " + detail;
    return out;
  };
  if (only_profile_ && *only_profile_ != shape.profile)
    return not_covered(Missing::profile, fmt::format("it is the expectation of {} only", *only_profile_));
  if (!op) return not_covered(Missing::op, fmt::format("'{}' is not an op ccbench knows", row.op));
  // The rows model fit skips are rows no curve describes (fit.cpp, observations).
  if (row.ranks < 2) return not_covered(Missing::row, "rows of one rank are not modelled");
  if (row_groups(row) != "none")
    return not_covered(Missing::row, "rows of concurrent groups (--groups) are not modelled");
  std::uint64_t bytes = row.bytes;
  if (modelled_by_most_loaded_rank(*op)) {
    const auto m = row.extra.find("matrix");
    const auto l = m != row.extra.end() && m->is_object() ? m->find("most_loaded_off_rank_bytes") : row.extra.end();
    if (l == row.extra.end() || !l->is_number_unsigned() || l->get<std::uint64_t>() == 0)
      return not_covered(Missing::row, "the row has no matrix.most_loaded_off_rank_bytes, the bytes its curve is of");
    bytes = l->get<std::uint64_t>();
  }
  if (bytes == 0) return not_covered(Missing::row, "a row of 0 bytes");

  // The groups that answer: the profile's own (measured), else every measured profile of the op
  // with a spec, scaled to this profile's spec (Model::predict's spec prior).
  const auto& groups = FitAccess::impl(model_).groups;
  std::vector<const Group*> for_op;
  std::set<std::string> ops, op_profiles;
  for (const auto& g : groups) {
    ops.insert(std::string(ccbench::name(g.op)));
    if (g.op == *op) {
      for_op.push_back(&g);
      op_profiles.insert(g.profile);
    }
  }
  if (for_op.empty()) return not_covered(Missing::op, fmt::format("it fits {} only", fmt::join(ops, ", ")));
  std::vector<const Group*> answering;
  std::set<int> other_rpn;
  if (op_profiles.contains(shape.profile)) {
    out.basis = Basis::measured;
    for (const Group* g : for_op) {
      if (g->profile != shape.profile) continue;
      if (g->ranks_per_node == rpn) {
        answering.push_back(g);
      } else {
        other_rpn.insert(g->ranks_per_node);
      }
    }
  } else {
    out.basis = Basis::from_spec;
    const auto spec = system::find_instance_profile(shape.profile);
    if (!spec || spec->efa_gbps <= 0)
      return not_covered(Missing::profile,
                         fmt::format("{} was not measured and has no spec in configs/instances/aws.yaml (measured: {})",
                                     shape.profile, fmt::join(op_profiles, ", ")));
    for (const Group* g : for_op) {
      if (g->spec_gbps <= 0) continue;
      if (g->ranks_per_node == rpn) {
        answering.push_back(g);
      } else {
        other_rpn.insert(g->ranks_per_node);
      }
    }
    if (answering.empty() && other_rpn.empty())
      return not_covered(Missing::profile,
                         fmt::format("{} was not measured, and no measured profile of {} has a spec to carry over",
                                     shape.profile, op_name));
  }
  if (answering.empty())
    return not_covered(
        Missing::ranks_per_node,
        fmt::format("{} on {} was fitted with {} ranks per node only", op_name,
                    out.basis == Basis::measured ? shape.profile : fmt::format("{}", fmt::join(op_profiles, ", ")),
                    fmt::join(other_rpn, ", ")));
  for (const Group* g : answering) {
    if (!g->dtypes.empty() && std::ranges::find(g->dtypes, row.dtype) == g->dtypes.end())
      return not_covered(Missing::dtype,
                         fmt::format("{} was fitted on {} only (this row: {})", op_name, fmt::join(g->dtypes, ", "),
                                     row.dtype.empty() ? "none" : row.dtype));
  }
  for (const Group* g : answering) {
    if (options_.extrapolate) break;
    if (nodes < g->nodes.front() || nodes > g->nodes.back())
      return not_covered(Missing::node_count,
                         fmt::format("fitted on {} node(s){}", node_list(g->nodes),
                                     out.basis == Basis::from_spec ? fmt::format(" of {}", g->profile) : ""));
    const auto [size_lo, size_hi] = sizes_measured_near(*g, nodes);
    if (bytes < size_lo || bytes > size_hi) {
      const bool matrix = modelled_by_most_loaded_rank(*op);
      return not_covered(Missing::size_range,
                         fmt::format("{}{} is outside the sizes measured at {} node(s){} ({} - {})",
                                     matrix ? "the most loaded rank's " : "", format_bytes(bytes), nodes,
                                     out.basis == Basis::from_spec ? fmt::format(" of {}", g->profile) : "",
                                     format_bytes(size_lo), format_bytes(size_hi)));
    }
  }
  const double percentile = model_.percentile();
  const auto measured_us = row_time_us(row, percentile);
  if (!measured_us)
    return not_covered(Missing::statistic,
                       percentile > 0
                           ? fmt::format("the model is of the {} of per-iteration times, which the row does not carry "
                                         "(measure with ccbench run --percentiles {})",
                                         percentiles::key(percentile), percentile)
                           : std::string("the row has no median time"));

  PredictQuery q;
  q.op = *op;
  q.bytes = bytes;
  q.nodes = nodes;
  q.ranks_per_node = rpn;
  q.profile = shape.profile;
  q.percentile = percentile;
  Prediction p;
  try {
    p = model_.predict(q);
  } catch (const UsageError& e) {
    // A curve with no positive time at this node count: the model describes nothing there.
    return not_covered(Missing::node_count, e.what());
  }
  out.extrapolated = p.extrapolated;
  const TimeBandUs band = band_of(p, options_.band);
  const double t = *measured_us;
  out.verdict = t > band.hi ? Verdict::below : t < band.lo ? Verdict::above : Verdict::normal;
  const int ranks = nodes * rpn;
  if (p.latency_share > 0.5) {
    out.metric = ExpectedMetric::time_us;
    out.lo = band.lo;
    out.hi = band.hi;
    out.predicted = p.time_us;
    out.measured = t;
    out.shortfall_pct = 100.0 * (t / p.time_us - 1.0);
  } else {
    out.metric = modelled_by_most_loaded_rank(*op) ? ExpectedMetric::most_loaded_gbps : ExpectedMetric::busbw_gbps;
    // A bandwidth is bytes over time: the band's slow end is its low end.
    out.lo = curve_busbw_gbps(*op, ranks, bytes, band.hi);
    out.hi = curve_busbw_gbps(*op, ranks, bytes, band.lo);
    out.predicted = curve_busbw_gbps(*op, ranks, bytes, p.time_us);
    out.measured = curve_busbw_gbps(*op, ranks, bytes, t);
    out.shortfall_pct = 100.0 * (1.0 - p.time_us / t);
  }
  return out;
}

json to_json(const RowExpectation& e) {
  json j = {{"verdict", std::string(name(e.verdict))}};
  if (e.verdict == Verdict::not_covered) {
    j["model"] = e.model;
    j["profile"] = e.profile;
    j["missing"] = std::string(name(e.missing));
    j["reason"] = e.reason;
    return j;
  }
  j["metric"] = std::string(name(e.metric));
  j["band"] = std::string(name(e.band));
  j["lo"] = e.lo;
  j["hi"] = e.hi;
  j["predicted"] = e.predicted;
  j["measured"] = e.measured;
  j["shortfall_pct"] = e.shortfall_pct;
  j["basis"] = std::string(name(e.basis));
  j["model"] = e.model;
  j["profile"] = e.profile;
  if (e.extrapolated) j["extrapolated"] = true;
  return j;
}

}  // namespace ccbench::model
