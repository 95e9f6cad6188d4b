// Pricing a training step and the migration delta (docs/model.md, "Planning a training step").
#include "model/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "core/comma_list.hpp"
#include "core/error.hpp"
#include "core/types.hpp"
#include "model/fit.hpp"

namespace ccbench::model {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// At equal bus bandwidth (nccl-tests' busbw, docs/method.md) an op takes a fixed share of an
// all-reduce of the same S: ring all-gather and reduce-scatter move (n-1)/n x S per rank, an
// all-reduce twice that (a half); a broadcast moves S (busbw = algbw), an all-reduce 2(n-1)/n x S
// (a share of n / (2(n-1)) on n ranks). Used only when the model has no curve for the op itself,
// and said so in the row's note. nullopt: no such share (another op, or a broadcast on fewer than 2
// ranks or on a layout the query leaves to the model).
std::optional<double> share_of_allreduce(const PredictQuery& q) {
  if (q.op == Op::allgather || q.op == Op::reduce_scatter) return 0.5;
  if (q.op != Op::broadcast || q.ranks_per_node < 1) return std::nullopt;
  const double n = static_cast<double>(q.nodes) * q.ranks_per_node;
  if (n < 2) return std::nullopt;
  return n / (2 * (n - 1));
}

Prediction scaled_allreduce(const Pricer& price, PredictQuery q, double share) {
  q.op = Op::allreduce;
  Prediction p = price(q);
  p.time_us *= share;
  p.time_lo_us *= share;
  p.time_hi_us *= share;
  return p;  // busbw unchanged: that is the assumption
}

// A routed expert exchange: its own curve at L, the most loaded rank's off-rank bytes (fit.hpp);
// without one, an all-to-all in which every rank moves L, i.e. of S' = L x n / (n - 1) (an even
// all-to-all of S sends (n-1)/n x S off rank), said in the note.
CallPrice price_routed_exchange(const StepCollective& c, const std::string& profile, const Pricer& price) {
  const PredictQuery own{to_op(c.op), c.most_loaded_bytes, c.nodes, c.ranks_per_node(), profile, c.percentile};
  CallPrice out;
  try {
    out.per_call = price(own);
    out.priced = true;
    return out;
  } catch (const UsageError& e) {
    const double n = c.group;
    const auto even = static_cast<std::uint64_t>(std::llround(static_cast<double>(c.most_loaded_bytes) * n / (n - 1)));
    try {
      out.per_call = price({Op::alltoall, even, c.nodes, c.ranks_per_node(), profile, c.percentile});
      out.priced = true;
      out.note = fmt::format(
          "an all-to-all of {} bytes, in which every rank moves the most loaded rank's {} off-rank bytes (no curve for "
          "this op)",
          even, c.most_loaded_bytes);
    } catch (const UsageError& fallback) {
      out.note = fmt::format("not priced: {}; nor as an all-to-all: {}", e.what(), fallback.what());
    }
  }
  return out;
}

Interval scaled(const Interval& x, double k) { return {k * x.value, k * x.lo, k * x.hi}; }

}  // namespace

CallPrice price_call(const PredictQuery& q, const Pricer& price) {
  CallPrice out;
  try {
    out.per_call = price(q);
    out.priced = true;
  } catch (const UsageError& e) {
    const std::optional<double> share = share_of_allreduce(q);
    if (!share) {
      out.note = fmt::format("not priced: {}", e.what());
      return out;
    }
    const std::string as =
        *share == 0.5 ? std::string("half an all-reduce") : fmt::format("{:.3g} x an all-reduce", *share);
    try {
      out.per_call = scaled_allreduce(price, q, *share);
      out.priced = true;
      out.note = *share == 0.5 ? std::string("half an all-reduce of the same size (no curve for this op)")
                               : fmt::format(
                                     "{} of the same size (a broadcast moves S, an all-reduce 2(n-1)/n x S "
                                     "on n = {} ranks, at equal bus bandwidth; no curve for this op)",
                                     as, q.nodes * q.ranks_per_node);
    } catch (const UsageError& fallback) {
      out.note = fmt::format("not priced: {}; nor as {}: {}", e.what(), as, fallback.what());
    }
  }
  return out;
}

Interval times(double calls, const Prediction& p) {
  return {calls * p.time_us, calls * p.time_lo_us, calls * p.time_hi_us};
}

void add_interval(Interval& sum, const Interval& x) {
  sum.value += x.value;
  sum.lo += x.lo;
  sum.hi += x.hi;
}

Interval interval_difference(const Interval& a, const Interval& b) {
  return {b.value - a.value, b.lo - a.hi, b.hi - a.lo};
}

Interval interval_ratio(const Interval& a, const Interval& b) {
  if (!(a.value > 0) || !(a.lo > 0)) return {kNaN, kNaN, kNaN};
  return {b.value / a.value, b.lo / a.hi, b.hi / a.lo};
}

nlohmann::json interval_json(const Interval& x) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"value", num(x.value)}, {"lo", num(x.lo)}, {"hi", num(x.hi)}};
}

Pricer first_measured(const std::vector<Model>& models) {
  return [&models](const PredictQuery& q) {
    const auto has = [&q](const Model& m, bool on_profile) {
      return m.percentile() == q.percentile && std::ranges::any_of(m.groups(), [&](const GroupSummary& g) {
               return g.op == q.op && (!on_profile || g.profile == q.profile);
             });
    };
    // Among the models of the query's statistic (median or a percentile): the op measured on the
    // profile; else a model with the op at all (its spec prior); else the first model of that
    // statistic, or the first model, whose error names what is missing.
    for (const bool on_profile : {true, false})
      for (const auto& m : models)
        if (has(m, on_profile)) return m.predict(q);
    for (const auto& m : models)
      if (m.percentile() == q.percentile) return m.predict(q);
    return models.front().predict(q);
  };
}

std::pair<std::string, std::string> parse_migrate(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw UsageError(fmt::format("--migrate {}: expected FROM:TO (two profiles)", text));
  return {text.substr(0, colon), text.substr(colon + 1)};
}

std::vector<std::string> profiles_to_price(const std::vector<Model>& models, const std::string& profiles_flag,
                                           const std::optional<std::pair<std::string, std::string>>& migration) {
  std::vector<std::string> profiles;
  for (const std::string_view item : split_commas(profiles_flag)) {
    std::string profile;
    for (char c : item)
      if (c != ' ') profile += c;
    if (!profile.empty()) profiles.push_back(std::move(profile));
  }
  if (profiles.empty()) {
    std::set<std::string> seen;
    for (const auto& m : models)
      for (const auto& p : m.profiles())
        if (seen.insert(p).second) profiles.push_back(p);
  }
  if (migration) {
    for (const auto& p : {migration->first, migration->second})
      if (std::find(profiles.begin(), profiles.end(), p) == profiles.end()) profiles.push_back(p);
  }
  if (profiles.empty()) throw UsageError("no profile to price: the models list none; name them with --profiles");
  return profiles;
}

ProfilePlan price_step(const std::vector<StepCollective>& step, const std::string& profile, const Pricer& price) {
  ProfilePlan out;
  out.profile = profile;
  for (const auto& c : step) {
    PricedCollective row;
    row.step = c;
    const Op op = to_op(c.op);
    if (c.bytes == 0) {
      // The workload's sizes divide down to nothing (e.g. model.parameters: 1 over 80 layers).
      row.note = "not priced: 0 bytes per call (the workload's sizes round down to nothing)";
    } else {
      // A pipeline send/recv is one pair of ranks; a sendrecv row's time is that of its slowest pair
      // (the one crossing a node boundary when it spans nodes), whatever the ranks beside it do, so
      // the curve's own layout (ranks per node 0: the most measured one) prices it.
      const int ranks_per_node = op == Op::sendrecv ? 0 : c.ranks_per_node();
      const CallPrice p = modelled_by_most_loaded_rank(op)
                              ? price_routed_exchange(c, profile, price)
                              : price_call({op, c.bytes, c.nodes, ranks_per_node, profile, c.percentile}, price);
      row.priced = p.priced;
      row.note = p.note;
      row.per_call = p.per_call;
    }
    auto phase = std::ranges::find(out.phases, c.phase, &PhaseTotal::phase);
    if (phase == out.phases.end()) {
      PhaseTotal first;
      first.phase = c.phase;
      phase = out.phases.insert(out.phases.end(), first);
    }
    ++phase->rows;
    if (row.priced) {
      row.step_us = times(static_cast<double>(c.count), row.per_call);
      add_interval(phase->total_us, row.step_us);
      const Interval per_request = scaled(row.step_us, c.per_request);
      add_interval(out.total_us, per_request);
      if (!c.overlaps) add_interval(out.exposed_us, per_request);
      out.extrapolated = out.extrapolated || row.per_call.extrapolated;
      out.from_spec = out.from_spec || row.per_call.from_spec;
    } else {
      ++out.unpriced;
      ++phase->unpriced;
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

Migration migrate(const ProfilePlan& from, const ProfilePlan& to) {
  Migration m;
  m.from = from.profile;
  m.to = to.profile;
  Interval from_exposed, to_exposed;
  for (std::size_t i = 0; i < from.rows.size() && i < to.rows.size(); ++i) {
    const auto& a = from.rows[i];
    const auto& b = to.rows[i];
    if (!a.priced || !b.priced) continue;
    ++m.rows_compared;
    // A request's total weighs each row by how often its phase recurs (a decode step: per token).
    const double k = a.step.per_request;
    add_interval(m.from_total_us, scaled(a.step_us, k));
    add_interval(m.to_total_us, scaled(b.step_us, k));
    if (!a.step.overlaps) {
      add_interval(from_exposed, scaled(a.step_us, k));
      add_interval(to_exposed, scaled(b.step_us, k));
    }
    auto phase = std::ranges::find(m.phases, a.step.phase, &PhaseMigration::phase);
    if (phase == m.phases.end()) {
      PhaseMigration first;
      first.phase = a.step.phase;
      phase = m.phases.insert(m.phases.end(), first);
    }
    ++phase->rows_compared;
    add_interval(phase->from_us, a.step_us);
    add_interval(phase->to_us, b.step_us);
  }
  for (auto& phase : m.phases) {
    phase.delta_us = interval_difference(phase.from_us, phase.to_us);
    phase.ratio = interval_ratio(phase.from_us, phase.to_us);
  }
  m.delta_total_us = interval_difference(m.from_total_us, m.to_total_us);
  m.delta_exposed_us = interval_difference(from_exposed, to_exposed);
  m.ratio_total = interval_ratio(m.from_total_us, m.to_total_us);
  m.ratio_exposed = interval_ratio(from_exposed, to_exposed);
  return m;
}

Plan make_plan(const Workload& workload, const std::vector<std::string>& profiles, const Pricer& price,
               const std::optional<std::pair<std::string, std::string>>& migration) {
  Plan plan;
  plan.workload = workload;
  plan.step = step_collectives(workload);
  for (const auto& p : profiles) plan.profiles.push_back(price_step(plan.step, p, price));
  if (migration) {
    const ProfilePlan* from = nullptr;
    const ProfilePlan* to = nullptr;
    for (const auto& p : plan.profiles) {
      if (p.profile == migration->first) from = &p;
      if (p.profile == migration->second) to = &p;
    }
    if (!from || !to) {
      throw UsageError(fmt::format("--migrate {}:{}: both profiles must be among those priced", migration->first,
                                   migration->second));
    }
    plan.migration = migrate(*from, *to);
  }
  return plan;
}

nlohmann::json to_json(const Plan& plan) {
  const Workload& w = plan.workload;
  nlohmann::json j;
  j["plan_version"] = kPlanVersion;
  j["workload"] = {{"name", w.name},
                   {"source", w.source},
                   {"parameters", w.parameters},
                   {"layers", w.layers},
                   {"hidden", w.hidden},
                   {"experts", w.experts},
                   {"top_k", w.top_k},
                   {"expert_parameters", w.expert_parameters},
                   {"dtype", std::string(name(w.dtype))},
                   {"grad_dtype", std::string(name(w.grad_dtype))},
                   {"sequence_length", w.sequence_length},
                   {"micro_batch", w.micro_batch},
                   {"micro_batches", w.micro_batches},
                   {"ranks", w.ranks},
                   {"ranks_per_node", w.ranks_per_node},
                   {"nodes", w.nodes()},
                   {"tp", w.tp},
                   {"pp", w.pp},
                   {"dp", w.dp},
                   {"ep", w.ep},
                   {"sharding", std::string(name(w.sharding))},
                   {"shard_group", w.shard_group > 0 ? w.shard_group : w.dp},
                   {"bucket_bytes", w.bucket_bytes}};
  // The `run --moe` spec and seed that measure this routing's dispatch (a serving workload's: one
  // decode step's batch per rank).
  if (w.routing) j["workload"]["moe_routing"] = {{"spec", w.routing->text}, {"seed", w.routing_seed}};
  if (w.serving) {
    const Serving& s = *w.serving;
    for (const char* key :
         {"sequence_length", "micro_batch", "micro_batches", "grad_dtype", "sharding", "shard_group", "bucket_bytes"})
      j["workload"].erase(key);
    j["workload"]["serving"] = {
        {"batch", s.batch},
        {"prompt_tokens", s.prompt_tokens},
        {"generated_tokens", s.generated_tokens},
        {"kv_bytes_per_token", s.kv_bytes_per_token},
        {"percentile", s.percentile},
        {"disaggregated", s.disaggregated},
        {"prefill", {{"batch", s.prefill_batch}, {"tp", s.prefill_tp}, {"pp", s.prefill_pp}, {"ep", s.prefill_ep}}}};
  }
  // Phases and statistics appear in a serving plan only: a training plan's document is as before.
  const bool serving = w.serving.has_value();
  auto& cs = j["collectives"] = nlohmann::json::array();
  for (const auto& c : plan.step) {
    cs.push_back({{"what", c.what},
                  {"op", std::string(name(c.op))},
                  {"bytes", c.bytes},
                  {"group", c.group},
                  {"nodes", c.nodes},
                  {"ranks_per_node", c.ranks_per_node()},
                  {"count", c.count},
                  {"overlaps", c.overlaps}});
    if (c.most_loaded_bytes > 0) {
      cs.back()["most_loaded_bytes"] = c.most_loaded_bytes;
      cs.back()["off_rank_imbalance"] = c.off_rank_imbalance;
    }
    if (serving) {
      cs.back()["phase"] = std::string(name(c.phase));
      cs.back()["percentile"] = c.percentile;
      cs.back()["per_request"] = c.per_request;
    }
  }
  auto& ps = j["profiles"] = nlohmann::json::array();
  for (const auto& p : plan.profiles) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : p.rows) {
      nlohmann::json row = {{"priced", r.priced}, {"note", r.note}};
      if (r.priced) {
        row["time_us"] = interval_json({r.per_call.time_us, r.per_call.time_lo_us, r.per_call.time_hi_us});
        row["busbw_gbps"] = r.per_call.busbw_gbps;
        row["extrapolated"] = r.per_call.extrapolated;
        row["from_spec"] = r.per_call.from_spec;
        row["step_us"] = interval_json(r.step_us);
      }
      rows.push_back(std::move(row));
    }
    ps.push_back({{"profile", p.profile},
                  {"total_us", interval_json(p.total_us)},
                  {"exposed_us", interval_json(p.exposed_us)},
                  {"unpriced", p.unpriced},
                  {"extrapolated", p.extrapolated},
                  {"from_spec", p.from_spec},
                  {"rows", std::move(rows)}});
    if (serving) {
      auto& phases = ps.back()["phases"] = nlohmann::json::array();
      for (const auto& t : p.phases)
        phases.push_back({{"phase", std::string(name(t.phase))},
                          {"total_us", interval_json(t.total_us)},
                          {"rows", t.rows},
                          {"unpriced", t.unpriced}});
    }
  }
  if (plan.migration) {
    const Migration& m = *plan.migration;
    j["migration"] = {{"from", m.from},
                      {"to", m.to},
                      {"rows_compared", m.rows_compared},
                      {"from_total_us", interval_json(m.from_total_us)},
                      {"to_total_us", interval_json(m.to_total_us)},
                      {"delta_total_us", interval_json(m.delta_total_us)},
                      {"delta_exposed_us", interval_json(m.delta_exposed_us)},
                      {"ratio_total", interval_json(m.ratio_total)},
                      {"ratio_exposed", interval_json(m.ratio_exposed)}};
    if (serving) {
      auto& phases = j["migration"]["phases"] = nlohmann::json::array();
      for (const auto& t : m.phases)
        phases.push_back({{"phase", std::string(name(t.phase))},
                          {"rows_compared", t.rows_compared},
                          {"from_us", interval_json(t.from_us)},
                          {"to_us", interval_json(t.to_us)},
                          {"delta_us", interval_json(t.delta_us)},
                          {"ratio", interval_json(t.ratio)}});
    }
  }
  return j;
}

}  // namespace ccbench::model
