#include "trace/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_depth.hpp"
#include "core/types.hpp"

namespace ccbench::trace {

namespace {

constexpr std::array kCallOps = {
    CallOpInfo{CallOp::allreduce, "allreduce", true, false, false},
    CallOpInfo{CallOp::allgather, "allgather", false, false, false},
    CallOpInfo{CallOp::reduce_scatter, "reduce_scatter", true, false, false},
    CallOpInfo{CallOp::alltoall, "alltoall", false, false, false},
    CallOpInfo{CallOp::alltoallv, "alltoallv", false, false, false},
    CallOpInfo{CallOp::broadcast, "broadcast", false, true, false},
    CallOpInfo{CallOp::reduce, "reduce", true, true, false},
    CallOpInfo{CallOp::send, "send", false, false, true},
    CallOpInfo{CallOp::recv, "recv", false, false, true},
    CallOpInfo{CallOp::barrier, "barrier", false, false, false},
};
constexpr std::array<CallOp, kCallOps.size()> all_ops_array() {
  std::array<CallOp, kCallOps.size()> ops{};
  for (std::size_t i = 0; i < kCallOps.size(); ++i) ops[i] = kCallOps[i].op;
  return ops;
}
constexpr auto kAllCallOps = all_ops_array();
// The table is indexed by the enum: each entry must sit at its own value.
constexpr bool table_in_enum_order() {
  for (std::size_t i = 0; i < kCallOps.size(); ++i)
    if (static_cast<std::size_t>(kCallOps[i].op) != i) return false;
  return true;
}
static_assert(table_in_enum_order());
static_assert(kCallOps.size() == static_cast<std::size_t>(CallOp::barrier) + 1);

constexpr std::array<std::string_view, 5> kOriginNames = {"execution_graph", "profiler", "linked", "nccl_log",
                                                          "nccl_inspector"};
static_assert(kOriginNames.size() == static_cast<std::size_t>(Origin::nccl_inspector) + 1);

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw ParseError(fmt::format("{}: {}", where, what));
}

const nlohmann::json& field(const nlohmann::json& object, const char* key, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) fail(where, fmt::format("field '{}' is missing", key));
  return *it;
}

std::uint64_t unsigned_field(const nlohmann::json& value, const char* key, const std::string& where) {
  if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<std::int64_t>() >= 0))
    fail(where, fmt::format("field '{}' must be a whole number >= 0", key));
  return value.get<std::uint64_t>();
}

int small_int_field(const nlohmann::json& value, const char* key, const std::string& where) {
  if (!value.is_number_integer() || value.get<std::int64_t>() < 0 || value.get<std::int64_t>() > (1 << 24))
    fail(where, fmt::format("field '{}' must be a whole number in [0, 16777216]", key));
  return value.get<int>();
}

std::optional<double> optional_time(const nlohmann::json& object, const char* key, const std::string& where,
                                    bool may_be_negative) {
  const auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  if (!it->is_number() || (!may_be_negative && it->get<double>() < 0))
    fail(where, fmt::format("field '{}' must be a number{}", key, may_be_negative ? "" : " >= 0"));
  return it->get<double>();
}

// The schema's additionalProperties: false, checked where the reader meets the object.
void only_fields(const nlohmann::json& j, std::initializer_list<std::string_view> known, const std::string& where) {
  for (const auto& [key, value] : j.items())
    if (std::ranges::find(known, std::string_view(key)) == known.end())
      fail(where, fmt::format("unknown field '{}'", key));
}

Call parse_call(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) fail(where, "a call must be an object");
  only_fields(j,
              {"op", "dtype", "count", "counts", "redop", "root", "peer", "group", "start_us", "duration_us", "gap_us",
               "step", "origin", "source_id"},
              where);
  Call call;
  const auto& op = field(j, "op", where);
  const auto parsed_op = op.is_string() ? parse_call_op(op.get<std::string>()) : std::nullopt;
  if (!parsed_op)
    fail(where,
         "field 'op' must be one of allreduce, allgather, reduce_scatter, alltoall, alltoallv, "
         "broadcast, reduce, send, recv, barrier");
  call.op = *parsed_op;
  const auto& dtype = field(j, "dtype", where);
  const auto parsed_dtype = dtype.is_string() ? parse_dtype(dtype.get<std::string>()) : std::nullopt;
  if (!parsed_dtype) fail(where, "field 'dtype' is not an element type ccbench knows");
  call.dtype = *parsed_dtype;
  call.count = unsigned_field(field(j, "count", where), "count", where);
  const auto& group = field(j, "group", where);
  if (!group.is_string() || group.get<std::string>().empty()) fail(where, "field 'group' must be a group id");
  call.group = group.get<std::string>();
  const CallOpInfo& op_info = info(call.op);
  if (auto it = j.find("counts"); it != j.end()) {
    if (call.op != CallOp::alltoallv) fail(where, "field 'counts' is for alltoallv only");
    if (!it->is_array()) fail(where, "field 'counts' must be an array");
    std::uint64_t sum = 0;
    for (const auto& c : *it) sum += call.counts.emplace_back(unsigned_field(c, "counts", where));
    if (sum != call.count) fail(where, "field 'count' must be the sum of 'counts'");
  } else if (call.op == CallOp::alltoallv) {
    fail(where, "field 'counts' is missing (alltoallv)");
  }
  if (auto it = j.find("redop"); it != j.end()) {
    if (!op_info.takes_redop) fail(where, fmt::format("field 'redop' is not for {}", op_info.name));
    const auto r = it->is_string() ? parse_redop(it->get<std::string>()) : std::nullopt;
    if (!r || *r == RedOp::none) fail(where, "field 'redop' must be sum, prod, min, max or avg");
    call.redop = r;
  } else if (op_info.takes_redop) {
    fail(where, fmt::format("field 'redop' is missing ({})", op_info.name));
  }
  if (auto it = j.find("root"); it != j.end()) {
    if (!op_info.takes_root) fail(where, fmt::format("field 'root' is not for {}", op_info.name));
    call.root = small_int_field(*it, "root", where);
  } else if (op_info.takes_root) {
    fail(where, fmt::format("field 'root' is missing ({})", op_info.name));
  }
  if (auto it = j.find("peer"); it != j.end()) {
    if (!op_info.takes_peer) fail(where, fmt::format("field 'peer' is not for {}", op_info.name));
    call.peer = small_int_field(*it, "peer", where);
  } else if (op_info.takes_peer) {
    fail(where, fmt::format("field 'peer' is missing ({})", op_info.name));
  }
  call.start_us = optional_time(j, "start_us", where, true);
  call.duration_us = optional_time(j, "duration_us", where, false);
  call.gap_us = optional_time(j, "gap_us", where, true);
  if (auto it = j.find("step"); it != j.end()) {
    if (!it->is_number_integer()) fail(where, "field 'step' must be a whole number");
    call.step = it->get<std::int64_t>();
  }
  const auto& origin = field(j, "origin", where);
  const auto parsed_origin = origin.is_string() ? parse_origin(origin.get<std::string>()) : std::nullopt;
  if (!parsed_origin) fail(where, "field 'origin' is not a source record kind");
  call.origin = *parsed_origin;
  if (auto it = j.find("source_id"); it != j.end()) call.source_id = unsigned_field(*it, "source_id", where);
  return call;
}

std::vector<std::string> string_list(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto& list = field(j, key, where);
  if (!list.is_array()) fail(where, fmt::format("field '{}' must be an array of strings", key));
  std::vector<std::string> out;
  for (const auto& item : list) {
    if (!item.is_string()) fail(where, fmt::format("field '{}' must be an array of strings", key));
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::string string_field(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto& value = field(j, key, where);
  if (!value.is_string()) fail(where, fmt::format("field '{}' must be a string", key));
  return value.get<std::string>();
}

}  // namespace

const CallOpInfo& info(CallOp op) { return kCallOps[static_cast<std::size_t>(op)]; }
std::string_view name(CallOp op) { return info(op).name; }
std::span<const CallOp> all_call_ops() { return kAllCallOps; }
std::optional<CallOp> parse_call_op(std::string_view text) {
  for (const auto& entry : kCallOps)
    if (entry.name == text) return entry.op;
  return std::nullopt;
}

std::string_view name(Origin origin) { return kOriginNames[static_cast<std::size_t>(origin)]; }
std::optional<Origin> parse_origin(std::string_view text) {
  for (std::size_t i = 0; i < kOriginNames.size(); ++i)
    if (kOriginNames[i] == text) return static_cast<Origin>(i);
  return std::nullopt;
}

std::uint64_t send_bytes(const Call& call) { return call.count * ccbench::info(call.dtype).size_bytes; }

Trace load(const std::filesystem::path& path) {
  const std::string file = path.string();
  const std::string text = read_input_file(path);
  check_json_depth(text, file);
  Trace trace;
  // Calls are converted as each one's object closes and then dropped from the parse tree, so a trace
  // of 10^6 calls is held once, as Calls, not also as a JSON tree.
  std::vector<Call> pending;
  std::size_t rank_index = 0;
  bool in_ranks = false;  // inside the top-level "ranks" array
  bool in_calls = false;  // inside a rank's "calls" array
  const auto keep = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) -> bool {
    using E = nlohmann::json::parse_event_t;
    // Depths as nlohmann counts them: the root object 0, a rank object 2, a call object 4; a key
    // one deeper than the object it is in.
    if (event == E::key && depth == 1) in_ranks = parsed == "ranks";
    if (event == E::key && depth == 3) in_calls = in_ranks && parsed == "calls";
    if (event == E::object_end && depth == 4 && in_calls) {
      pending.push_back(parse_call(parsed, fmt::format("{}: ranks[{}].calls[{}]", file, rank_index, pending.size())));
      return false;
    }
    if (event == E::object_end && depth == 2 && in_ranks) {
      const std::string where = fmt::format("{}: ranks[{}]", file, rank_index);
      only_fields(parsed, {"rank", "file", "calls"}, where);
      RankCalls rank;
      rank.rank = small_int_field(field(parsed, "rank", where), "rank", where);
      rank.file = string_field(parsed, "file", where);
      if (!parsed.contains("calls") || !parsed["calls"].is_array()) fail(where, "field 'calls' must be an array");
      rank.calls = std::move(pending);
      pending.clear();
      trace.ranks.push_back(std::move(rank));
      ++rank_index;
      in_calls = false;
      return false;
    }
    return true;
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, keep);
  } catch (const nlohmann::json::parse_error& e) {
    fail(file, fmt::format("not JSON ({})", e.what()));
  }
  if (!doc.is_object()) fail(file, "a trace must be a JSON object");
  only_fields(doc, {"trace_version", "ranks", "world_size", "groups", "provenance"}, file);
  const auto& version = field(doc, "trace_version", file);
  if (version != kTraceVersion) fail(file, fmt::format("field 'trace_version' must be {}", kTraceVersion));
  trace.world_size = small_int_field(field(doc, "world_size", file), "world_size", file);
  if (trace.world_size < 1) fail(file, "field 'world_size' must be at least 1");
  const auto& groups = field(doc, "groups", file);
  if (!groups.is_array()) fail(file, "field 'groups' must be an array");
  std::map<std::string, std::size_t> group_size;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::string where = fmt::format("{}: groups[{}]", file, i);
    if (!groups[i].is_object()) fail(where, "a group must be an object");
    only_fields(groups[i], {"id", "ranks", "members_from_source"}, where);
    Group g;
    g.id = string_field(groups[i], "id", where);
    const auto& ranks = field(groups[i], "ranks", where);
    if (!ranks.is_array() || ranks.empty()) fail(where, "field 'ranks' must be a non-empty array");
    std::set<int> seen;
    for (const auto& r : ranks) {
      const int rank = small_int_field(r, "ranks", where);
      if (rank >= trace.world_size) fail(where, fmt::format("field 'ranks': rank {} is outside the world", rank));
      if (!seen.insert(rank).second) fail(where, fmt::format("field 'ranks': rank {} twice", rank));
      g.ranks.push_back(rank);
    }
    const auto& from_source = field(groups[i], "members_from_source", where);
    if (!from_source.is_boolean()) fail(where, "field 'members_from_source' must be true or false");
    g.members_from_source = from_source.get<bool>();
    if (!group_size.emplace(g.id, g.ranks.size()).second) fail(where, fmt::format("group id '{}' twice", g.id));
    trace.groups.push_back(std::move(g));
  }
  const std::string pwhere = file + ": provenance";
  const auto& prov = field(doc, "provenance", file);
  if (!prov.is_object()) fail(pwhere, "must be an object");
  only_fields(prov, {"format", "source", "source_version", "tool_version", "not_in_source"}, pwhere);
  trace.provenance.format = string_field(prov, "format", pwhere);
  trace.provenance.source = string_field(prov, "source", pwhere);
  trace.provenance.source_version = string_field(prov, "source_version", pwhere);
  trace.provenance.tool_version = string_field(prov, "tool_version", pwhere);
  trace.provenance.not_in_source = string_list(prov, "not_in_source", pwhere);
  std::set<int> ranks_seen;
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    const RankCalls& rank = trace.ranks[r];
    if (rank.rank >= trace.world_size)
      fail(fmt::format("{}: ranks[{}]", file, r), fmt::format("field 'rank': {} is outside the world", rank.rank));
    if (!ranks_seen.insert(rank.rank).second)
      fail(fmt::format("{}: ranks[{}]", file, r), fmt::format("field 'rank': {} twice", rank.rank));
    for (std::size_t i = 0; i < rank.calls.size(); ++i) {
      const Call& call = rank.calls[i];
      const std::string where = fmt::format("{}: ranks[{}].calls[{}]", file, r, i);
      const auto g = group_size.find(call.group);
      if (g == group_size.end()) fail(where, fmt::format("field 'group': '{}' is not in groups", call.group));
      const auto n = static_cast<int>(g->second);
      if (call.root && *call.root >= n) fail(where, "field 'root' is outside the group");
      if (call.peer && *call.peer >= n) fail(where, "field 'peer' is outside the group");
      if (call.op == CallOp::alltoallv && call.counts.size() != g->second)
        fail(where, "field 'counts' must have one entry per member of the group");
    }
  }
  std::ranges::sort(trace.ranks, {}, &RankCalls::rank);
  return trace;
}

}  // namespace ccbench::trace
