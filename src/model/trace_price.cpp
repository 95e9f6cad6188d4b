// Pricing a trace's step and setting a plan beside a trace (docs/model.md, "Pricing a trace").
#include "model/trace_price.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "core/sizes.hpp"
#include "core/types.hpp"

namespace ccbench::model {

namespace {

// a x b, or nullopt when it does not fit 64 bits (a trace's count may be any whole number).
std::optional<std::uint64_t> product(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// The curve a trace op is priced on; nullopt: ccbench measures nothing like it.
std::optional<Op> curve_op(trace::CallOp op) {
  using trace::CallOp;
  switch (op) {
    case CallOp::allreduce:
      return Op::allreduce;
    case CallOp::allgather:
      return Op::allgather;
    case CallOp::reduce_scatter:
      return Op::reduce_scatter;
    case CallOp::alltoall:
    case CallOp::alltoallv:
      return Op::alltoall;
    case CallOp::broadcast:
      return Op::broadcast;
    case CallOp::send:
    case CallOp::recv:
      return Op::fabric_pingpong;  // one-way time of a message: half a round trip
    case CallOp::reduce:
    case CallOp::barrier:
      return std::nullopt;
  }
  return std::nullopt;
}

bool point_to_point(trace::CallOp op) { return op == trace::CallOp::send || op == trace::CallOp::recv; }

// How a site is priced when it is not simply its op's curve at its size (said in its note).
std::string_view how_priced(trace::CallOp op) {
  if (op == trace::CallOp::alltoallv)
    return "as the alltoall whose every chunk is the largest (group x largest count x element bytes)";
  if (point_to_point(op)) return "from the fabric_pingpong curve: one-way time, half a round trip";
  return "";
}

void fill_size(TraceSite& site, const trace::Group& group, int ranks_per_node) {
  const std::uint64_t element = info(site.dtype).size_bytes;
  std::optional<std::uint64_t> bytes;
  switch (site.op) {
    case trace::CallOp::allgather:  // S is the output: every member's contribution
      bytes = product(site.count, static_cast<std::uint64_t>(site.group_size));
      if (bytes) bytes = product(*bytes, element);
      break;
    case trace::CallOp::alltoallv: {
      const std::uint64_t largest = site.counts.empty() ? 0 : *std::ranges::max_element(site.counts);
      bytes = product(largest, static_cast<std::uint64_t>(site.group_size));
      if (bytes) bytes = product(*bytes, element);
      break;
    }
    default:
      bytes = product(site.count, element);
  }
  if (!curve_op(site.op)) {
    site.unpriceable = site.op == trace::CallOp::barrier
                           ? "not priced: a barrier moves no data (ccbench has no curve for it)"
                           : "not priced: ccbench measures no reduce (no curve for it)";
  } else if (!bytes) {
    site.unpriceable = "not priced: the call's size does not fit 64 bits";
  } else if (*bytes == 0) {
    site.unpriceable = "not priced: 0 bytes per call";
  }
  site.bytes = bytes.value_or(0);
  if (point_to_point(site.op)) {
    // The fabric curve is asked at its own layout (ranks per node 0); site.nodes was set from the
    // peer (the key of the site).
    site.ranks_per_node = 0;
    return;
  }
  std::set<int> nodes;
  for (int r : group.ranks) nodes.insert(r / ranks_per_node);
  site.nodes = static_cast<int>(nodes.size());
  site.ranks_per_node = (site.group_size + site.nodes - 1) / site.nodes;
}

// Each rank's priced calls per step summed, over the sites `use` keeps, then the largest over the
// ranks (elementwise) and the rank with the largest value.
template <typename Use>
std::pair<Interval, int> slowest_rank(const TraceStep& step, const std::vector<PricedSite>& priced, Use use) {
  std::map<int, Interval> by_rank;
  for (std::size_t i = 0; i < step.sites.size(); ++i) {
    if (!use(i)) continue;
    for (const auto& [rank, calls] : step.sites[i].calls_by_rank)
      add_interval(by_rank[rank],
                   times(static_cast<double>(calls) / static_cast<double>(step.steps), priced[i].per_call));
  }
  Interval out;
  int critical = 0;
  bool first = true;
  for (const auto& [rank, sum] : by_rank) {
    if (first || sum.value > out.value) critical = rank;
    out.value = first ? sum.value : std::max(out.value, sum.value);
    out.lo = first ? sum.lo : std::max(out.lo, sum.lo);
    out.hi = first ? sum.hi : std::max(out.hi, sum.hi);
    first = false;
  }
  return {out, critical};
}

void put(nlohmann::json& j, const std::string& stem, const std::string& unit, const Interval& x) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  j[stem + unit] = num(x.value);
  j[stem + "_lo" + unit] = num(x.lo);
  j[stem + "_hi" + unit] = num(x.hi);
}

}  // namespace

TraceStep trace_step(const trace::Trace& t, int ranks_per_node, const std::string& source) {
  if (ranks_per_node < 1) throw UsageError(fmt::format("--ranks-per-node: {} must be at least 1", ranks_per_node));
  TraceStep out;
  out.source = source;
  out.format = t.provenance.format;
  out.world_size = t.world_size;
  out.ranks_per_node = ranks_per_node;
  std::map<std::string, const trace::Group*> groups;
  for (const auto& g : t.groups) groups[g.id] = &g;
  std::set<std::int64_t> markers;
  for (const auto& rank : t.ranks)
    for (const auto& call : rank.calls)
      if (call.step) markers.insert(*call.step);
  using Key = std::tuple<trace::CallOp, DType, std::uint64_t, std::vector<std::uint64_t>, std::string, int>;
  std::map<Key, std::size_t> index;
  for (std::size_t r = 0; r < t.ranks.size(); ++r) {
    const trace::RankCalls& rank = t.ranks[r];
    for (std::size_t i = 0; i < rank.calls.size(); ++i) {
      const trace::Call& call = rank.calls[i];
      if (!markers.empty() && !call.step) {
        ++out.calls_outside_steps;
        continue;
      }
      const trace::Group& g = *groups.at(call.group);  // trace::load checked every call's group
      // A message leaves the node only when the peer is on another node: 1 or 2 nodes, part of the
      // site's key (0 for a collective, whose nodes are its group's).
      int p2p_nodes = 0;
      if (call.peer) {
        const int peer_world = g.ranks[static_cast<std::size_t>(*call.peer)];
        p2p_nodes = rank.rank / ranks_per_node == peer_world / ranks_per_node ? 1 : 2;
      }
      const Key key{call.op, call.dtype, call.count, call.counts, call.group, p2p_nodes};
      auto [it, added] = index.emplace(key, out.sites.size());
      if (added) {
        TraceSite site;
        site.op = call.op;
        site.dtype = call.dtype;
        site.count = call.count;
        site.counts = call.counts;
        site.group = call.group;
        site.group_size = static_cast<int>(g.ranks.size());
        site.nodes = std::max(1, p2p_nodes);
        fill_size(site, g, ranks_per_node);
        site.first_call = fmt::format("{}: ranks[{}].calls[{}]", source, r, i);
        out.sites.push_back(std::move(site));
      }
      TraceSite& site = out.sites[it->second];
      ++site.calls_by_rank[rank.rank];
      ++site.calls;
    }
  }
  out.steps = markers.empty() ? 1 : static_cast<std::int64_t>(markers.size());
  for (auto& site : out.sites)
    site.calls_per_step = static_cast<double>(site.calls) / static_cast<double>(site.calls_by_rank.size()) /
                          static_cast<double>(out.steps);
  return out;
}

TraceProfile price_trace(const TraceStep& step, const std::string& profile, const Pricer& price) {
  TraceProfile out;
  out.profile = profile;
  for (const auto& site : step.sites) {
    PricedSite row;
    if (!site.unpriceable.empty()) {
      row.note = site.unpriceable;
    } else {
      const CallPrice p = price_call({*curve_op(site.op), site.bytes, site.nodes, site.ranks_per_node, profile}, price);
      row.priced = p.priced;
      row.per_call = p.per_call;
      const std::string_view how = how_priced(site.op);
      if (how.empty()) {
        row.note = p.note;
      } else if (p.priced) {
        row.note = p.note.empty() ? std::string(how) : fmt::format("{}; {}", how, p.note);
      } else if (point_to_point(site.op)) {
        constexpr std::string_view kPrefix = "not priced: ";
        const std::string reason = p.note.starts_with(kPrefix) ? p.note.substr(kPrefix.size()) : p.note;
        row.note = fmt::format(
            "not priced: no point-to-point curve for this profile (send and recv are priced {}; fit `ccbench "
            "fabric` results into the model): {}",
            how, reason);
      } else {
        row.note = fmt::format("{} ({})", p.note, how);
      }
    }
    if (row.priced) {
      row.step_us = times(site.calls_per_step, row.per_call);
      out.extrapolated = out.extrapolated || row.per_call.extrapolated;
      out.from_spec = out.from_spec || row.per_call.from_spec;
    } else {
      ++out.unpriced;
    }
    out.sites.push_back(std::move(row));
  }
  std::tie(out.step_us, out.critical_rank) =
      slowest_rank(step, out.sites, [&](std::size_t i) { return out.sites[i].priced; });
  return out;
}

void require_collectives_priced(const TraceStep& step, const TraceProfile& priced) {
  for (std::size_t i = 0; i < step.sites.size(); ++i) {
    const TraceSite& s = step.sites[i];
    if (priced.sites[i].priced || !s.unpriceable.empty() || point_to_point(s.op)) continue;
    throw UsageError(fmt::format("{}: op '{}' ({} per call, group of {} on {} node{}): {} on {}", s.first_call,
                                 trace::name(s.op), format_bytes(s.bytes), s.group_size, s.nodes,
                                 s.nodes == 1 ? "" : "s", priced.sites[i].note, priced.profile));
  }
}

TraceMigration migrate(const TraceStep& step, const TraceProfile& from, const TraceProfile& to) {
  TraceMigration m;
  m.from = from.profile;
  m.to = to.profile;
  const auto both = [&](std::size_t i) { return from.sites[i].priced && to.sites[i].priced; };
  for (std::size_t i = 0; i < step.sites.size(); ++i) m.sites_compared += both(i) ? 1 : 0;
  m.from_step_us = slowest_rank(step, from.sites, both).first;
  m.to_step_us = slowest_rank(step, to.sites, both).first;
  m.delta_us = interval_difference(m.from_step_us, m.to_step_us);
  m.ratio = interval_ratio(m.from_step_us, m.to_step_us);
  return m;
}

TraceMigration migrate(const TraceStep& step, const std::vector<TraceProfile>& priced,
                       const std::pair<std::string, std::string>& migration) {
  const TraceProfile* from = nullptr;
  const TraceProfile* to = nullptr;
  for (const auto& p : priced) {
    if (p.profile == migration.first) from = &p;
    if (p.profile == migration.second) to = &p;
  }
  if (!from || !to)
    throw UsageError(
        fmt::format("--migrate {}:{}: both profiles must be among those priced", migration.first, migration.second));
  return migrate(step, *from, *to);
}

nlohmann::json to_json(const TraceStep& step, const std::vector<TraceProfile>& profiles,
                       const std::optional<TraceMigration>& migration) {
  nlohmann::json j = {{"trace", step.source},
                      {"format", step.format},
                      {"world_size", step.world_size},
                      {"ranks_per_node", step.ranks_per_node},
                      {"steps", step.steps},
                      {"calls_outside_steps", step.calls_outside_steps},
                      {"band", 0.9}};
  auto& sites = j["sites"] = nlohmann::json::array();
  for (const auto& s : step.sites) {
    nlohmann::json site = {{"op", std::string(trace::name(s.op))},
                           {"dtype", std::string(name(s.dtype))},
                           {"count", s.count},
                           {"group", s.group},
                           {"group_size", s.group_size},
                           {"bytes", s.bytes},
                           {"nodes", s.nodes},
                           {"ranks_per_node", s.ranks_per_node},
                           {"calls", s.calls},
                           {"ranks", s.calls_by_rank.size()},
                           {"calls_per_step", s.calls_per_step}};
    if (s.op == trace::CallOp::alltoallv) site["counts"] = s.counts;
    sites.push_back(std::move(site));
  }
  auto& ps = j["profiles"] = nlohmann::json::array();
  for (const auto& p : profiles) {
    nlohmann::json profile = {{"profile", p.profile},
                              {"critical_rank", p.critical_rank},
                              {"unpriced", p.unpriced},
                              {"extrapolated", p.extrapolated},
                              {"from_spec", p.from_spec}};
    put(profile, "step", "_us", p.step_us);
    auto& rows = profile["sites"] = nlohmann::json::array();
    for (const auto& r : p.sites) {
      nlohmann::json row = {{"priced", r.priced}, {"note", r.note}};
      if (r.priced) {
        put(row, "time", "_us", {r.per_call.time_us, r.per_call.time_lo_us, r.per_call.time_hi_us});
        row["busbw_gbps"] = r.per_call.busbw_gbps;
        row["extrapolated"] = r.per_call.extrapolated;
        row["from_spec"] = r.per_call.from_spec;
        put(row, "step", "_us", r.step_us);
      }
      rows.push_back(std::move(row));
    }
    ps.push_back(std::move(profile));
  }
  if (migration) {
    nlohmann::json m = {
        {"from", migration->from}, {"to", migration->to}, {"sites_compared", migration->sites_compared}};
    put(m, "from_step", "_us", migration->from_step_us);
    put(m, "to_step", "_us", migration->to_step_us);
    put(m, "delta", "_us", migration->delta_us);
    put(m, "ratio", "", migration->ratio);
    j["migration"] = std::move(m);
  }
  return j;
}

std::string_view name(Agreement a) {
  static constexpr std::array<std::string_view, 5> kNames = {"same", "calls differ", "differs", "plan only",
                                                             "trace only"};
  return kNames[static_cast<std::size_t>(a)];
}

namespace {

// The plan's op for a trace op; send and recv are one plan row (the pair: group 2).
std::optional<StepOp> plan_op(trace::CallOp op) {
  using trace::CallOp;
  switch (op) {
    case CallOp::allreduce:
      return StepOp::allreduce;
    case CallOp::allgather:
      return StepOp::allgather;
    case CallOp::reduce_scatter:
      return StepOp::reduce_scatter;
    case CallOp::alltoall:
    case CallOp::alltoallv:
      return StepOp::alltoall;
    case CallOp::send:
    case CallOp::recv:
      return StepOp::sendrecv;
    default:
      return std::nullopt;
  }
}

std::vector<TraceRow> trace_rows(const TraceStep& step) {
  std::vector<TraceRow> rows;
  std::vector<std::pair<std::uint64_t, std::set<int>>> calls;  // per row: calls, issuing ranks
  std::map<std::tuple<std::string, std::uint64_t, int>, std::size_t> index;
  for (const auto& s : step.sites) {
    TraceRow row;
    row.plan_op = plan_op(s.op);
    row.op = point_to_point(s.op) ? "send/recv" : std::string(trace::name(s.op));
    row.bytes = s.bytes;
    row.group_size = point_to_point(s.op) ? 2 : s.group_size;
    auto [it, added] = index.emplace(std::tuple{row.op, row.bytes, row.group_size}, rows.size());
    if (added) {
      rows.push_back(row);
      calls.emplace_back();
    }
    calls[it->second].first += s.calls;
    for (const auto& [rank, n] : s.calls_by_rank) calls[it->second].second.insert(rank);
  }
  for (std::size_t i = 0; i < rows.size(); ++i)
    rows[i].calls_per_step = static_cast<double>(calls[i].first) / static_cast<double>(calls[i].second.size()) /
                             static_cast<double>(step.steps);
  return rows;
}

}  // namespace

std::vector<AgainstRow> against(const std::vector<StepCollective>& plan, const TraceStep& trace) {
  const std::vector<TraceRow> rows = trace_rows(trace);
  std::vector<bool> used(rows.size(), false);
  std::vector<AgainstRow> out(plan.size());
  std::vector<bool> matched(plan.size(), false);
  // First the exact matches (op, S and group size), then for each plan row left the nearest unused
  // site of its op: the same group size first, then the closest size on log scale.
  for (std::size_t i = 0; i < plan.size(); ++i) {
    out[i].plan_row = i;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const TraceRow& r = rows[k];
      if (used[k] || r.plan_op != plan[i].op || r.bytes != plan[i].bytes || r.group_size != plan[i].group) continue;
      used[k] = matched[i] = true;
      const auto count = static_cast<double>(plan[i].count);
      out[i].agreement =
          std::abs(r.calls_per_step - count) <= 1e-9 * std::max(1.0, count) ? Agreement::same : Agreement::calls_differ;
      out[i].trace = r;
      break;
    }
  }
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (matched[i]) continue;
    std::optional<std::size_t> best;
    auto distance = [&](std::size_t k) {
      const double ratio =
          std::log((static_cast<double>(rows[k].bytes) + 1) / (static_cast<double>(plan[i].bytes) + 1));
      return std::pair{rows[k].group_size != plan[i].group, std::abs(ratio)};
    };
    for (std::size_t k = 0; k < rows.size(); ++k)
      if (!used[k] && rows[k].plan_op == plan[i].op && (!best || distance(k) < distance(*best))) best = k;
    if (best) {
      used[*best] = true;
      out[i].agreement = Agreement::differs;
      out[i].trace = rows[*best];
    } else {
      out[i].agreement = Agreement::plan_only;
    }
  }
  for (std::size_t k = 0; k < rows.size(); ++k)
    if (!used[k]) out.push_back({Agreement::trace_only, std::nullopt, rows[k]});
  return out;
}

nlohmann::json against_json(const std::vector<AgainstRow>& rows, const TraceStep& trace) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json row = {{"agreement", std::string(name(r.agreement))}};
    row["plan_row"] = r.plan_row ? nlohmann::json(*r.plan_row) : nlohmann::json(nullptr);
    if (r.trace) {
      row["trace"] = {{"op", r.trace->op},
                      {"bytes", r.trace->bytes},
                      {"group_size", r.trace->group_size},
                      {"calls_per_step", r.trace->calls_per_step}};
    } else {
      row["trace"] = nullptr;
    }
    list.push_back(std::move(row));
  }
  return {{"trace", trace.source},
          {"steps", trace.steps},
          {"calls_outside_steps", trace.calls_outside_steps},
          {"rows", std::move(list)}};
}

}  // namespace ccbench::model
