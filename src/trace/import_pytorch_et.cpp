// PyTorch 1.13's execution-graph observer JSON (torch.profiler.ExecutionGraphObserver, schema
// 1.0.x), optionally with the profiler's chrome trace of the same rank, linked to it.
//
// What the sources say (docs/replay.md "Trace format"): the graph has a node per c10d op
// (c10d::allreduce_, ...) with input shapes and element types, and a node per backend call
// (gloo:all_reduce, nccl:all_reduce, ...) with the tensor it works on; the process group and the
// reduce op are opaque objects ("<Object>"); it has no times. all_to_all_single has no c10d node in
// 1.13, only its backend node. The profiler (built without Kineto) has names, start and duration
// of the same c10d and backend calls, no shapes. Linked, in order of each name (as Chakra's trace
// link pairs a node with its profiler event): shapes from the graph, times from the profiler's
// backend event (the call's communication itself).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_depth.hpp"
#include "core/types.hpp"
#include "trace/trace_import.hpp"
#include "trace/trace_writer.hpp"

namespace ccbench::trace {

namespace {

struct OpName {
  std::string_view name;
  CallOp op;
};
// c10d dispatcher ops as the graph names them.
constexpr OpName kC10dOps[] = {
    {"c10d::allreduce_", CallOp::allreduce},
    {"c10d::allgather_", CallOp::allgather},
    {"c10d::broadcast_", CallOp::broadcast},
    {"c10d::reduce_scatter_", CallOp::reduce_scatter},
    {"c10d::reduce_", CallOp::reduce},
    {"c10d::alltoall_", CallOp::alltoall},
    {"c10d::send", CallOp::send},
    {"c10d::recv_", CallOp::recv},
    {"c10d::barrier", CallOp::barrier},
};
// The backend's own record of a call, after "gloo:" or "nccl:".
constexpr OpName kBackendOps[] = {
    {"all_reduce", CallOp::allreduce},
    {"all_gather", CallOp::allgather},
    {"broadcast", CallOp::broadcast},
    {"reduce_scatter", CallOp::reduce_scatter},
    {"reduce", CallOp::reduce},
    {"all_to_all", CallOp::alltoall},
    {"send", CallOp::send},
    {"recv", CallOp::recv},
    {"barrier", CallOp::barrier},
};

std::optional<CallOp> c10d_op(std::string_view name) {
  for (const auto& e : kC10dOps)
    if (e.name == name) return e.op;
  return std::nullopt;
}
std::optional<CallOp> backend_op(std::string_view name) {
  for (std::string_view prefix : {"gloo:", "nccl:"}) {
    if (!name.starts_with(prefix)) continue;
    name.remove_prefix(prefix.size());
    for (const auto& e : kBackendOps)
      if (e.name == name) return e.op;
  }
  return std::nullopt;
}

// "Tensor(float)" -> float32; the C++ type names 1.13 writes.
std::optional<DType> tensor_dtype(std::string_view type) {
  const auto open = type.find("Tensor(");
  if (open == std::string_view::npos) return std::nullopt;
  type.remove_prefix(open + 7);
  type = type.substr(0, type.find(')'));
  struct Entry {
    std::string_view cpp;
    DType dtype;
  };
  static constexpr Entry kTypes[] = {
      {"float", DType::float32},          {"double", DType::float64},      {"c10::Half", DType::float16},
      {"c10::BFloat16", DType::bfloat16}, {"int", DType::int32},           {"long int", DType::int64},
      {"signed char", DType::int8},       {"unsigned char", DType::uint8},
  };
  for (const auto& e : kTypes)
    if (e.cpp == type) return e.dtype;
  return std::nullopt;
}

// Elements in a shape ([10, 4]) or a list of shapes ([[10], [10]]), summed.
std::uint64_t elements(const nlohmann::json& shape, const std::string& where) {
  if (!shape.is_array()) fail(where, "field 'input_shapes' must hold arrays");
  if (shape.empty()) return 1;  // a scalar
  if (shape.front().is_array()) {
    std::uint64_t sum = 0;
    for (const auto& s : shape) sum += elements(s, where);
    return sum;
  }
  std::uint64_t product = 1;
  for (const auto& d : shape) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0)
      fail(where, "field 'input_shapes': a size is not a whole number");
    product *= d.get<std::uint64_t>();
  }
  return product;
}

int int_input(const nlohmann::json& node, std::size_t index, const char* what, const std::string& where) {
  const auto& inputs = node["inputs"];
  if (!inputs.is_array() || inputs.size() <= index || !inputs[index].is_number_integer())
    fail(where, fmt::format("field 'inputs'[{}] ({}) must be a whole number", index, what));
  return inputs[index].get<int>();
}

// Which input holds the tensors that are sent, per c10d op.
std::size_t send_input(CallOp op) {
  return op == CallOp::allgather || op == CallOp::reduce_scatter || op == CallOp::alltoall ? 1 : 0;
}

struct GraphCall {
  Call call;
  std::string backend_name;  // the backend node that did it ("gloo:all_reduce"), "" when none
  std::int64_t backend_id = -1;
  std::string record_name;  // the node the call was read from
};

struct ProfilerEvent {
  double start_us;
  double duration_us;
};

nlohmann::json parse_json_file(const std::filesystem::path& path) {
  const std::string text = read_input_file(path);
  check_json_depth(text, path.string());
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail(path.string(), fmt::format("not JSON ({})", e.what()));
  }
}

bool is_execution_graph(const nlohmann::json& doc) { return doc.is_object() && doc.contains("nodes"); }
bool is_chrome_trace(const nlohmann::json& doc) {
  return doc.is_array() || (doc.is_object() && doc.contains("traceEvents"));
}

std::vector<GraphCall> graph_calls(const nlohmann::json& doc, const std::string& file, std::string& schema,
                                   std::map<std::string, std::size_t>& skipped, bool& relabelled_steps) {
  if (!doc["nodes"].is_array()) fail(file, "field 'nodes' must be an array");
  if (auto it = doc.find("schema"); it != doc.end() && it->is_string()) schema = it->get<std::string>();
  if (!schema.starts_with("1.0."))
    fail(file, fmt::format("field 'schema': '{}' is not an execution graph schema 1.0.x", schema));
  struct Node {
    std::int64_t id;
    const nlohmann::json* json;
    std::size_t index;
  };
  std::vector<Node> nodes;
  std::map<std::int64_t, std::string> names;
  for (std::size_t i = 0; i < doc["nodes"].size(); ++i) {
    const auto& n = doc["nodes"][i];
    const std::string where = fmt::format("{}: nodes[{}]", file, i);
    if (!n.is_object()) fail(where, "a node must be an object");
    for (const char* key : {"id", "parent"})
      if (!n.contains(key) || !n[key].is_number_integer())
        fail(where, fmt::format("field '{}' must be a whole number", key));
    if (!n.contains("name") || !n["name"].is_string()) fail(where, "field 'name' must be a string");
    nodes.push_back({n["id"].get<std::int64_t>(), &n, i});
    names[n["id"].get<std::int64_t>()] = n["name"].get<std::string>();
  }
  // Steps are numbered by their marker's order (the ProfilerStep#N nodes by id): PyTorch 1.13's
  // profiler labels its first two steps both #0, so the label alone would merge them. A call
  // belongs to the last marker that started before it (ids are given in start order). The parent
  // links are no guide: the profiler enters a step's record in one step() call and leaves it in
  // the next, and the 1.13 graph parents a step's calls under the thread's root or an older node.
  std::vector<std::int64_t> step_marks;  // marker node ids, ascending
  for (const auto& [id, node_name] : names)
    if (node_name.starts_with("ProfilerStep#")) {
      if (node_name != fmt::format("ProfilerStep#{}", step_marks.size())) relabelled_steps = true;
      step_marks.push_back(id);
    }
  const auto step_of = [&](std::int64_t id) -> std::optional<std::int64_t> {
    const auto after = std::ranges::upper_bound(step_marks, id);
    if (after == step_marks.begin()) return std::nullopt;
    return static_cast<std::int64_t>(after - step_marks.begin()) - 1;
  };
  std::ranges::sort(nodes, {}, &Node::id);
  std::vector<GraphCall> calls;
  // c10d calls no backend node has claimed yet, oldest first. A backend node belongs to the oldest one
  // of the same op, element type and size: gloo and NCCL run a group's work in the order it was
  // issued, and the node's parent is not a reliable link (an async call's backend node can sit under
  // the next c10d call).
  std::vector<std::size_t> unpaired;
  for (const auto& n : nodes) {
    const auto& node = *n.json;
    const std::string node_name = node["name"].get<std::string>();
    const std::string where = fmt::format("{}: nodes[{}] ({} id {})", file, n.index, node_name, n.id);
    const auto c10d = c10d_op(node_name);
    const auto backend = backend_op(node_name);
    if (!c10d && !backend) {
      if (node_name.starts_with("c10d::")) ++skipped[node_name];
      continue;
    }
    const CallOp op = c10d ? *c10d : *backend;
    if (!node.contains("input_shapes") || !node["input_shapes"].is_array())
      fail(where, "field 'input_shapes' must be an array");
    if (!node.contains("input_types") || !node["input_types"].is_array())
      fail(where, "field 'input_types' must be an array");
    const std::size_t input = c10d ? send_input(op) : 0;
    GraphCall gc;
    gc.record_name = node_name;
    if (backend) gc.backend_name = node_name;
    Call& call = gc.call;
    call.op = op;
    call.origin = Origin::execution_graph;
    call.source_id = static_cast<std::uint64_t>(n.id);
    call.group = "world";
    if (op == CallOp::barrier) {
      call.count = 0;
      call.dtype = DType::uint8;
    } else {
      const auto& shapes = node["input_shapes"];
      const auto& types = node["input_types"];
      if (shapes.size() <= input || types.size() <= input || !types[input].is_string())
        fail(where, fmt::format("field 'input_shapes'/'input_types' has no input {}", input));
      const auto dtype = tensor_dtype(types[input].get<std::string>());
      if (!dtype)
        fail(where, fmt::format("field 'input_types'[{}]: '{}' is not a tensor type ccbench knows", input,
                                types[input].get<std::string>()));
      call.dtype = *dtype;
      call.count = elements(shapes[input], where);
    }
    if (info(op).takes_redop) call.redop = RedOp::sum;
    if (c10d && op == CallOp::broadcast) call.root = int_input(node, 2, "root rank", where);
    if (c10d && op == CallOp::reduce) call.root = int_input(node, 3, "root rank", where);
    if (c10d && (op == CallOp::send || op == CallOp::recv)) call.peer = int_input(node, 2, "peer rank", where);
    if (!c10d && info(op).takes_root) call.root = 0;
    if (!c10d && info(op).takes_peer) fail(where, "a backend send/recv node without its c10d node names no peer");
    call.step = step_of(n.id);
    if (backend) {
      const auto owner = std::ranges::find_if(unpaired, [&](std::size_t i) {
        const Call& c = calls[i].call;
        return c.op == call.op && c.dtype == call.dtype && c.count == call.count;
      });
      if (owner != unpaired.end()) {
        calls[*owner].backend_name = node_name;
        calls[*owner].backend_id = n.id;
        unpaired.erase(owner);
        continue;
      }
      gc.backend_id = n.id;
    }
    calls.push_back(std::move(gc));
    if (c10d) unpaired.push_back(calls.size() - 1);
  }
  return calls;
}

// Profiler events by name, in start order.
std::map<std::string, std::vector<ProfilerEvent>> profiler_events(const nlohmann::json& doc, const std::string& file) {
  const nlohmann::json& events = doc.is_array() ? doc : doc["traceEvents"];
  if (!events.is_array()) fail(file, "field 'traceEvents' must be an array");
  std::map<std::string, std::vector<ProfilerEvent>> by_name;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) continue;
    const std::string event_name = e["name"].get<std::string>();
    if (!c10d_op(event_name) && !backend_op(event_name)) continue;
    if (e.value("ph", "") != "X") continue;
    const std::string where = fmt::format("{}: traceEvents[{}] ({})", file, i, event_name);
    for (const char* key : {"ts", "dur"})
      if (!e.contains(key) || !e[key].is_number() || e[key].get<double>() < 0)
        fail(where, fmt::format("field '{}' must be a number >= 0", key));
    by_name[event_name].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
  }
  for (auto& [n, list] : by_name) std::ranges::stable_sort(list, {}, &ProfilerEvent::start_us);
  return by_name;
}

// PyTorch 2.x's ExecutionTraceObserver (schema 1.0.x-chakra / 1.1.x-chakra): nodes with
// "ctrl_deps", "inputs": {"values", "shapes", "types"} and "attrs": [{"name", "type", "value"}]; each
// collective has a record_param_comms node whose attrs name it (collective_name, dtype,
// in_msg_nelems, in_split_size, pg_name, pg_size, global_rank_start, global_rank_stride).
bool is_execution_trace_2x(const nlohmann::json& doc) {
  const auto& nodes = doc["nodes"];
  return nodes.is_array() && !nodes.empty() && nodes.front().is_object() && nodes.front().contains("inputs") &&
         nodes.front()["inputs"].is_object();
}

struct TraceCall2x {
  Call call;
  Group group;  // from pg_name, pg_size and the rank stride
};

std::vector<TraceCall2x> trace_calls_2x(const nlohmann::json& doc, const std::string& file, int world,
                                        std::map<std::string, std::size_t>& left_out, bool& relabelled_steps) {
  const auto& nodes = doc["nodes"];
  std::vector<std::pair<std::int64_t, std::size_t>> order;  // (id, index)
  std::vector<std::int64_t> step_marks;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    const std::string where = fmt::format("{}: nodes[{}]", file, i);
    if (!n.is_object() || !n.contains("id") || !n["id"].is_number_integer())
      fail(where, "field 'id' must be a whole number");
    if (!n.contains("name") || !n["name"].is_string()) fail(where, "field 'name' must be a string");
    const std::string node_name = n["name"].get<std::string>();
    if (node_name.starts_with("ProfilerStep#")) step_marks.push_back(n["id"].get<std::int64_t>());
    if (node_name == "record_param_comms") order.emplace_back(n["id"].get<std::int64_t>(), i);
  }
  std::ranges::sort(step_marks);
  for (std::size_t k = 0; k < step_marks.size(); ++k) {
    const auto id = step_marks[k];
    const auto it =
        std::ranges::find_if(nodes, [&](const auto& n) { return n["id"].template get<std::int64_t>() == id; });
    if ((*it)["name"].template get<std::string>() != fmt::format("ProfilerStep#{}", k)) relabelled_steps = true;
  }
  std::ranges::sort(order);
  std::vector<TraceCall2x> out;
  for (const auto& [id, index] : order) {
    const auto& n = nodes[index];
    const std::string where = fmt::format("{}: nodes[{}] (record_param_comms id {})", file, index, id);
    std::map<std::string, nlohmann::json> attrs;
    if (!n.contains("attrs") || !n["attrs"].is_array()) fail(where, "field 'attrs' must be an array");
    for (const auto& a : n["attrs"])
      if (a.is_object() && a.contains("name") && a["name"].is_string() && a.contains("value"))
        attrs[a["name"].get<std::string>()] = a["value"];
    const auto text = [&](const char* key) {
      const auto it = attrs.find(key);
      if (it == attrs.end() || !it->second.is_string())
        fail(where, fmt::format("field 'attrs.{}' must be a string", key));
      std::string value = it->second.get<std::string>();
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
      return value;
    };
    const auto whole = [&](const char* key) -> std::int64_t {
      const auto it = attrs.find(key);
      if (it == attrs.end() || !it->second.is_number_integer())
        fail(where, fmt::format("field 'attrs.{}' must be a whole number", key));
      return it->second.get<std::int64_t>();
    };
    const std::string collective = text("collective_name");
    std::optional<CallOp> op;
    static constexpr OpName kNames[] = {
        {"allreduce", CallOp::allreduce},
        {"allreduce_coalesced", CallOp::allreduce},
        {"allgather", CallOp::allgather},
        {"_allgather_base", CallOp::allgather},
        {"allgather_into_tensor_coalesced", CallOp::allgather},
        {"reduce_scatter", CallOp::reduce_scatter},
        {"_reduce_scatter_base", CallOp::reduce_scatter},
        {"reduce_scatter_tensor_coalesced", CallOp::reduce_scatter},
        {"broadcast", CallOp::broadcast},
        {"reduce", CallOp::reduce},
        {"all_to_all", CallOp::alltoall},
        {"all_to_allv", CallOp::alltoallv},
        {"barrier", CallOp::barrier},
    };
    for (const auto& e : kNames)
      if (e.name == collective) op = e.op;
    if (!op) {
      ++left_out[collective];
      continue;
    }
    TraceCall2x tc;
    Call& call = tc.call;
    call.op = *op;
    call.origin = Origin::execution_graph;
    call.source_id = static_cast<std::uint64_t>(id);
    struct Entry {
      std::string_view name;
      DType dtype;
    };
    static constexpr Entry kTypes[] = {
        {"Float", DType::float32}, {"Double", DType::float64}, {"Half", DType::float16}, {"BFloat16", DType::bfloat16},
        {"Int", DType::int32},     {"Long", DType::int64},     {"Char", DType::int8},    {"Byte", DType::uint8},
    };
    const std::string dtype_name = text("dtype");
    const auto dtype = std::ranges::find(kTypes, std::string_view(dtype_name), &Entry::name);
    if (dtype == std::end(kTypes))
      fail(where, fmt::format("field 'attrs.dtype': '{}' is not an element type ccbench has", dtype_name));
    call.dtype = dtype->dtype;
    const auto nelems = whole("in_msg_nelems");
    if (nelems < 0) fail(where, "field 'attrs.in_msg_nelems' must be >= 0");
    call.count = *op == CallOp::barrier ? 0 : static_cast<std::uint64_t>(nelems);
    const auto size = whole("pg_size");
    const auto start = whole("global_rank_start");
    const auto stride = whole("global_rank_stride");
    if (size < 1 || start < 0 || stride < 1 || start + (size - 1) * stride >= world)
      fail(where, fmt::format("fields 'attrs.global_rank_start/stride', 'pg_size': ranks {}+{}k, k < {}, are not in a "
                              "world of {}",
                              start, stride, size, world));
    tc.group.id = text("pg_name");
    for (std::int64_t k = 0; k < size; ++k) tc.group.ranks.push_back(static_cast<int>(start + k * stride));
    call.group = tc.group.id;
    if (*op == CallOp::alltoallv) {
      nlohmann::json splits;
      try {
        splits = nlohmann::json::parse(text("in_split_size"));
      } catch (const nlohmann::json::parse_error&) {
        fail(where, "field 'attrs.in_split_size' must be a list of whole numbers");
      }
      std::uint64_t rows = 0;
      if (!splits.is_array() || splits.size() != static_cast<std::size_t>(size))
        fail(where, "field 'attrs.in_split_size' must have one entry per member of the group");
      for (const auto& v : splits) {
        if (!v.is_number_unsigned()) fail(where, "field 'attrs.in_split_size' must be a list of whole numbers");
        rows += v.get<std::uint64_t>();
      }
      if (rows == 0 || call.count % rows != 0)
        fail(where, "field 'attrs.in_split_size' does not divide 'in_msg_nelems' into rows");
      for (const auto& v : splits) call.counts.push_back(v.get<std::uint64_t>() * (call.count / rows));
    }
    if (info(*op).takes_redop) call.redop = RedOp::sum;
    if (info(*op).takes_root) call.root = 0;
    const auto after = std::ranges::upper_bound(step_marks, id);
    if (after != step_marks.begin()) call.step = static_cast<std::int64_t>(after - step_marks.begin()) - 1;
    out.push_back(std::move(tc));
  }
  return out;
}

struct RankFiles {
  std::optional<std::filesystem::path> graph, profiler;
};

// What makes two calls the same call site when every call is taken as on the world.
using CallSite = std::tuple<CallOp, DType, std::uint64_t, std::optional<int>>;

// "0-1,3": ranks in ascending order, runs joined.
std::string rank_ranges(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out;
}

// The 1.13 graph names no process group, so every call is taken as on the world; a call site that
// the ranks do not issue alike (the same number of times) is on another group, or its sizes differ
// by rank (an all_to_all_single with uneven splits). Each such site is named with how many calls
// each set of ranks issues: the source does not say which, and a guess (a group of the ranks that
// issue it) would be wrong for either.
std::vector<std::string> uneven_call_sites(const std::vector<std::map<CallSite, std::size_t>>& per_rank) {
  std::set<CallSite> sites;
  for (const auto& counts : per_rank)
    for (const auto& [site, n] : counts) sites.insert(site);
  std::vector<std::string> notes;
  for (const auto& site : sites) {
    std::map<std::size_t, std::vector<int>> ranks_by_count;
    for (std::size_t r = 0; r < per_rank.size(); ++r) {
      const auto it = per_rank[r].find(site);
      ranks_by_count[it == per_rank[r].end() ? 0 : it->second].push_back(static_cast<int>(r));
    }
    if (ranks_by_count.size() == 1) continue;
    const auto& [op, dtype, count, root] = site;
    std::string by_ranks;
    for (auto it = ranks_by_count.rbegin(); it != ranks_by_count.rend(); ++it)
      by_ranks += fmt::format("{}{} on ranks {}", by_ranks.empty() ? "" : ", ", it->first, rank_ranges(it->second));
    notes.push_back(fmt::format(
        "process group of {} {} x{}{}: the ranks do not issue it alike (calls: {}): on a group the source does not "
        "name, or with sizes that differ by rank; written on the world like every call",
        name(op), name(dtype), count, root ? fmt::format(" root {}", *root) : "", by_ranks));
  }
  return notes;
}

ImportSummary import_execution_trace_2x(const std::map<int, RankFiles>& ranks, TraceWriter& writer,
                                        const ImportOptions& options) {
  int expected = 0;
  for (const auto& [rank, rf] : ranks) {
    if (rank != expected || !rf.graph)
      fail((rf.graph ? *rf.graph : *rf.profiler).string(),
           fmt::format("no execution trace for rank {} (ranks must be 0..N-1)", expected));
    if (rf.profiler)
      fail(rf.profiler->string(),
           "a PyTorch 2.x execution trace is not linked to a profiler trace here: import the "
           "profiler traces alone with pytorch-profiler for times");
    ++expected;
  }
  const int world = expected;
  std::map<std::string, std::size_t> left_out;
  std::map<std::string, Group> groups;
  bool relabelled_steps = false;
  std::string schema;
  ImportSummary summary;
  for (const auto& [rank, rf] : ranks) {
    const std::string file = rf.graph->string();
    const nlohmann::json doc = parse_json_file(*rf.graph);
    if (!is_execution_trace_2x(doc)) fail(file, "field 'nodes': not a PyTorch 2.x execution trace like rank 0's");
    if (doc.contains("schema") && doc["schema"].is_string()) schema = doc["schema"].get<std::string>();
    auto calls = trace_calls_2x(doc, file, world, left_out, relabelled_steps);
    writer.begin_rank(rank, file);
    for (auto& tc : calls) {
      const auto [it, inserted] = groups.emplace(tc.group.id, tc.group);
      if (!inserted && it->second.ranks != tc.group.ranks)
        fail(file, fmt::format("process group '{}' has other members here than in an earlier call", tc.group.id));
      writer.add(std::move(tc.call));
    }
    writer.end_rank();
  }
  Provenance p;
  p.format = std::string(name(ImportFormat::pytorch_et));
  p.source = "PyTorch 2.x execution trace observer (record_param_comms nodes)";
  p.source_version = "execution trace schema " + schema;
  p.tool_version = options.tool_version;
  p.not_in_source.push_back("reduce op: not in record_param_comms' attributes; taken as sum");
  p.not_in_source.push_back("root of broadcast and reduce: not in record_param_comms' attributes; taken as 0");
  p.not_in_source.push_back(
      "call start and duration: the execution trace has no times (import the profiler "
      "traces with pytorch-profiler)");
  if (relabelled_steps)
    p.not_in_source.push_back(
        "step numbers: the ProfilerStep#N labels repeat or skip: steps are numbered by their "
        "marker's order");
  for (const auto& [c, n] : left_out)
    p.not_in_source.push_back(
        fmt::format("{} calls of {}: not an op of the trace format (send/recv: the trace "
                    "names no peer), left out",
                    n, c));
  std::vector<Group> group_list;
  for (auto& [id, g] : groups) group_list.push_back(std::move(g));
  summary.ranks = world;
  summary.not_in_source = p.not_in_source;
  writer.finish(world, group_list, p);
  return summary;
}

}  // namespace

ImportSummary import_pytorch_et(const std::vector<std::filesystem::path>& files, TraceWriter& writer,
                                const ImportOptions& options) {
  std::map<int, RankFiles> ranks;
  for (const auto& file : files) {
    const auto rank = rank_from_file_name(file);
    if (!rank) fail(file.string(), "the file name states no rank (e.g. eg_rank0.json)");
    // Reading each file twice (here and below) keeps one file's tree in memory at a time.
    const nlohmann::json doc = parse_json_file(file);
    if (!is_execution_graph(doc) && !is_chrome_trace(doc))
      fail(file.string(),
           "neither an execution graph (field 'nodes') nor a profiler chrome trace (field 'traceEvents')");
    auto& slot = is_execution_graph(doc) ? ranks[*rank].graph : ranks[*rank].profiler;
    if (slot)
      fail(file.string(), fmt::format("rank {} has a second file of this kind (first: {})", *rank, slot->string()));
    slot = file;
  }
  // PyTorch 2.x execution traces name every collective in a record_param_comms node.
  if (!ranks.empty() && ranks.begin()->second.graph) {
    const nlohmann::json first = parse_json_file(*ranks.begin()->second.graph);
    if (is_execution_trace_2x(first)) return import_execution_trace_2x(ranks, writer, options);
  }
  int expected = 0;
  for (const auto& [rank, rf] : ranks) {
    if (rank != expected)
      fail(files.front().string(), fmt::format("no file for rank {} (ranks must be 0..N-1)", expected));
    if (!rf.graph)
      fail(rf.profiler->string(),
           fmt::format("rank {} has a profiler trace but no execution graph (its shapes)", rank));
    ++expected;
  }
  const int world = expected;
  std::string schema;
  std::map<std::string, std::size_t> skipped;
  std::map<std::string, std::size_t> unlinked;  // profiler events with no graph call, by name
  std::map<std::string, std::size_t> untimed;   // graph calls with no profiler event, by the event's name
  std::size_t alltoall_from_backend = 0;
  bool any_profiler = false, all_profiler = true, relabelled_steps = false;
  std::vector<std::map<CallSite, std::size_t>> sites_per_rank(static_cast<std::size_t>(world));
  ImportSummary summary;
  for (const auto& [rank, rf] : ranks) {
    std::string rank_schema;
    std::vector<GraphCall> calls =
        graph_calls(parse_json_file(*rf.graph), rf.graph->string(), rank_schema, skipped, relabelled_steps);
    if (!schema.empty() && rank_schema != schema)
      fail(rf.graph->string(),
           fmt::format("field 'schema': '{}' differs from the other ranks' '{}'", rank_schema, schema));
    schema = rank_schema;
    std::string file_list = rf.graph->string();
    if (rf.profiler) {
      any_profiler = true;
      file_list += "," + rf.profiler->string();
      auto events = profiler_events(parse_json_file(*rf.profiler), rf.profiler->string());
      // The k-th event of a name is the k-th node of that name by id (both are the same record's
      // start) when the two counts agree. The backend event times the communication; the c10d
      // event only its enqueueing, on the calling thread, where the 1.13 profiler loses none.
      // When a backend event is missing (the 1.13 profiler without Kineto drops a worker thread's
      // event now and then), a call's event must start between its own c10d event and the next
      // one of the same name; a call with none found keeps its shapes and has no times.
      std::vector<std::optional<double>> anchor(calls.size());
      std::map<std::string, std::vector<std::pair<std::int64_t, std::size_t>>> c10d_nodes, timed_nodes;
      for (std::size_t i = 0; i < calls.size(); ++i) {
        const auto& gc = calls[i];
        const auto record_id = static_cast<std::int64_t>(*gc.call.source_id);
        if (c10d_op(gc.record_name)) c10d_nodes[gc.record_name].emplace_back(record_id, i);
        if (gc.backend_name.empty())
          timed_nodes[gc.record_name].emplace_back(record_id, i);
        else
          timed_nodes[gc.backend_name].emplace_back(gc.backend_id, i);
      }
      for (auto& [key, list] : c10d_nodes) {
        std::ranges::sort(list);
        const auto& starts = events[key];
        if (starts.size() == list.size())
          for (std::size_t k = 0; k < list.size(); ++k) anchor[list[k].second] = starts[k].start_us;
      }
      const auto link = [&](std::size_t call_index, const ProfilerEvent& e) {
        Call& call = calls[call_index].call;
        call.start_us = e.start_us;
        call.duration_us = e.duration_us;
        call.origin = Origin::linked;
      };
      for (auto& [key, list] : timed_nodes) {
        std::ranges::sort(list);
        const auto& timed = events[key];
        std::size_t linked = 0;
        if (timed.size() == list.size()) {
          for (std::size_t k = 0; k < list.size(); ++k) link(list[k].second, timed[k]);
          linked = list.size();
        } else if (std::ranges::all_of(list, [&](const auto& node) { return anchor[node.second].has_value(); })) {
          std::size_t next = 0;
          for (std::size_t k = 0; k < list.size(); ++k) {
            while (next < timed.size() && timed[next].start_us < *anchor[list[k].second]) ++next;
            const bool before_next_call =
                k + 1 == list.size() || (next < timed.size() && timed[next].start_us < *anchor[list[k + 1].second]);
            if (next < timed.size() && before_next_call) {
              link(list[k].second, timed[next++]);
              ++linked;
            }
          }
        }
        if (linked < list.size()) untimed[key] += list.size() - linked;
        if (timed.size() > linked) unlinked[key] += timed.size() - linked;
      }
      // c10d events of calls timed by their backend event are accounted for by that call.
      for (const auto& [key, list] : c10d_nodes)
        if (!timed_nodes.contains(key) && events[key].size() > list.size())
          unlinked[key] += events[key].size() - list.size();
      for (const auto& [event_name, list] : events)
        if (!c10d_nodes.contains(event_name) && !timed_nodes.contains(event_name)) unlinked[event_name] += list.size();
    } else {
      all_profiler = false;
    }
    writer.begin_rank(rank, file_list);
    for (auto& gc : calls) {
      if (gc.call.op == CallOp::alltoall && !c10d_op(gc.record_name)) ++alltoall_from_backend;
      ++sites_per_rank[static_cast<std::size_t>(rank)][{gc.call.op, gc.call.dtype, gc.call.count, gc.call.root}];
      writer.add(std::move(gc.call));
    }
    writer.end_rank();
  }
  std::vector<Group> groups{{"world", {}, false}};
  for (int r = 0; r < world; ++r) groups.front().ranks.push_back(r);
  Provenance p;
  p.format = std::string(name(ImportFormat::pytorch_et));
  p.source = any_profiler ? "PyTorch execution graph observer, linked with the PyTorch profiler's chrome trace"
                          : "PyTorch execution graph observer";
  p.source_version = "execution graph schema " + schema;
  p.tool_version = options.tool_version;
  p.not_in_source.push_back(
      "process group: the execution graph writes it as <Object>; every call is taken as on the world");
  for (auto& note : uneven_call_sites(sites_per_rank)) p.not_in_source.push_back(std::move(note));
  p.not_in_source.push_back("reduce op: the execution graph writes it as <Object>; taken as sum");
  if (alltoall_from_backend > 0)
    p.not_in_source.push_back(fmt::format(
        "{} all_to_all calls have no c10d node (all_to_all_single): read from the backend's node, which gives the "
        "input size only (split sizes not in the source: taken as equal, op alltoall)",
        alltoall_from_backend));
  if (!any_profiler)
    p.not_in_source.push_back(
        "call start and duration: the execution graph has no times (give the profiler's trace too)");
  else if (!all_profiler)
    p.not_in_source.push_back("call start and duration: only for the ranks given a profiler trace");
  if (relabelled_steps)
    p.not_in_source.push_back(
        "step numbers: the ProfilerStep#N labels repeat or skip (PyTorch 1.13 labels its "
        "first two steps #0): steps are numbered by their marker's order");
  for (const auto& [n, count] : untimed)
    p.not_in_source.push_back(fmt::format(
        "{} calls have no profiler event {} (the profiler lost it): no times, shapes from the graph", count, n));
  for (const auto& [n, count] : unlinked)
    p.not_in_source.push_back(
        fmt::format("{} profiler events {} have no execution-graph node (no shapes): left out", count, n));
  for (const auto& [n, count] : skipped)
    p.not_in_source.push_back(fmt::format("{} calls of {}: not an op of the trace format, left out", count, n));
  summary.ranks = world;
  summary.not_in_source = p.not_in_source;
  writer.finish(world, groups, p);
  return summary;
}

}  // namespace ccbench::trace
