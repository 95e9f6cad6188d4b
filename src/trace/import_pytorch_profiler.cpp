// PyTorch 2.x profiler chrome traces (Kineto), one per rank: the `record_param_comms` CPU events
// and the arguments c10d gives them ("Collective name", "dtype", "In msg nelems", "Out msg
// nelems", "In split size", "Group size", "Process Group Name", "Process Group Ranks", "Src Rank",
// "Dst Rank", "Seq"); the rank from the trace's "distributedInfo" (else the file name); steps from
// the ProfilerStep#N events. A call is timed by its NCCL kernel when the trace has them (GPU
// kernels carry the same "Collective name" arguments; the k-th kernel of a process group is its
// k-th call, NCCL running a group's work in order), else by the CPU event (the host's enqueue).
//
// What it cannot say: the reduce op and a broadcast's or reduce's root (not in the arguments);
// the members of a group of more than 30 ranks (the ranks list is cut there).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_depth.hpp"
#include "trace/trace_import.hpp"
#include "trace/trace_writer.hpp"

namespace ccbench::trace {

namespace {

struct CollectiveName {
  std::string_view name;
  CallOp op;
};
// c10d's collective names (ProcessGroupNCCL / Gloo), as record_param_comms writes them.
constexpr CollectiveName kCollectives[] = {
    {"allreduce", CallOp::allreduce},
    {"allreduce_coalesced", CallOp::allreduce},
    {"allgather", CallOp::allgather},
    {"_allgather_base", CallOp::allgather},
    {"all_gather_into_tensor_coalesced", CallOp::allgather},
    {"allgather_into_tensor_coalesced", CallOp::allgather},
    {"reduce_scatter", CallOp::reduce_scatter},
    {"_reduce_scatter_base", CallOp::reduce_scatter},
    {"reduce_scatter_tensor_coalesced", CallOp::reduce_scatter},
    {"broadcast", CallOp::broadcast},
    {"reduce", CallOp::reduce},
    {"all_to_all", CallOp::alltoall},
    {"all_to_allv", CallOp::alltoallv},
    {"send", CallOp::send},
    {"recv", CallOp::recv},
    {"barrier", CallOp::barrier},
};

// c10::toString(ScalarType), which record_param_comms writes.
std::optional<DType> scalar_type(std::string_view name) {
  struct Entry {
    std::string_view name;
    DType dtype;
  };
  static constexpr Entry kTypes[] = {
      {"Float", DType::float32},
      {"Double", DType::float64},
      {"Half", DType::float16},
      {"BFloat16", DType::bfloat16},
      {"Int", DType::int32},
      {"Long", DType::int64},
      {"Char", DType::int8},
      {"Byte", DType::uint8},
      {"Float8_e4m3fn", DType::fp8_e4m3},
      {"Float8_e5m2", DType::fp8_e5m2},
  };
  for (const auto& e : kTypes)
    if (e.name == name) return e.dtype;
  return std::nullopt;
}

// "[0, 1, 2]" (or a JSON array) -> its numbers; nullopt when cut ("[0, 1, ..., 63]").
std::optional<std::vector<std::int64_t>> int_list(const nlohmann::json& value, const std::string& where,
                                                  const char* field) {
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  if (text.find("...") != std::string::npos) return std::nullopt;
  nlohmann::json list;
  try {
    list = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error&) {
    fail(where, fmt::format("field '{}' must be a list of whole numbers", field));
  }
  if (!list.is_array()) fail(where, fmt::format("field '{}' must be a list of whole numbers", field));
  std::vector<std::int64_t> out;
  for (const auto& v : list) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
      fail(where, fmt::format("field '{}' must be a list of whole numbers", field));
    out.push_back(v.get<std::int64_t>());
  }
  return out;
}

std::uint64_t whole_arg(const nlohmann::json& args, const char* key, const std::string& where) {
  const auto it = args.find(key);
  if (it == args.end()) fail(where, fmt::format("field 'args.{}' is missing", key));
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0)
    fail(where, fmt::format("field 'args.{}' must be a whole number >= 0", key));
  return it->get<std::uint64_t>();
}

std::string string_arg(const nlohmann::json& args, const char* key, const std::string& where) {
  const auto it = args.find(key);
  if (it == args.end() || !it->is_string()) fail(where, fmt::format("field 'args.{}' must be a string", key));
  return it->get<std::string>();
}

struct Pending {
  Call call;
  std::string group_name;
  double cpu_start_us = 0;
};

}  // namespace

ImportSummary import_pytorch_profiler(const std::vector<std::filesystem::path>& files, TraceWriter& writer,
                                      const ImportOptions& options) {
  std::map<int, std::filesystem::path> by_rank;
  std::optional<int> world_from_source;
  for (const auto& file : files) {
    // The rank: distributedInfo.rank, read from the top of the file without parsing its events twice.
    const std::string text = read_input_file(file);
    check_json_depth(text, file.string());
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      fail(file.string(), fmt::format("not JSON ({})", e.what()));
    }
    std::optional<int> rank;
    if (doc.is_object())
      if (const auto info = doc.find("distributedInfo"); info != doc.end() && info->is_object()) {
        if (info->contains("rank") && (*info)["rank"].is_number_integer()) rank = (*info)["rank"].get<int>();
        if (info->contains("world_size") && (*info)["world_size"].is_number_integer())
          world_from_source = (*info)["world_size"].get<int>();
      }
    if (!rank) rank = rank_from_file_name(file);
    if (!rank || *rank < 0) fail(file.string(), "no distributedInfo.rank and no rank in the file name");
    if (by_rank.contains(*rank))
      fail(file.string(), fmt::format("rank {} again (also {})", *rank, by_rank[*rank].string()));
    by_rank[*rank] = file;
  }
  const int world = std::max(world_from_source.value_or(0), static_cast<int>(by_rank.size()));
  for (int r = 0; r < static_cast<int>(by_rank.size()); ++r)
    if (!by_rank.contains(r))
      fail(files.front().string(), fmt::format("no file for rank {} (ranks must be 0..N-1)", r));
  std::map<std::string, Group> groups;
  bool took_world = false;
  std::vector<int> cpu_timed_ranks;  // ranks with a group whose calls have no kernel each
  std::map<std::string, std::uint64_t> left_out;
  ImportSummary summary;
  for (const auto& [rank, file] : by_rank) {
    const nlohmann::json doc = nlohmann::json::parse(read_input_file(file));
    const nlohmann::json& events = doc.is_array() ? doc : doc.value("traceEvents", nlohmann::json());
    if (!events.is_array()) fail(file.string(), "field 'traceEvents' must be an array");
    std::vector<double> step_starts;
    std::vector<Pending> calls;
    std::map<std::string, std::vector<std::pair<double, double>>> kernels;  // group -> (start, duration)
    for (std::size_t i = 0; i < events.size(); ++i) {
      const auto& e = events[i];
      if (!e.is_object() || e.value("ph", "") != "X" || !e.contains("name") || !e["name"].is_string()) continue;
      const std::string event_name = e["name"].get<std::string>();
      const std::string where = fmt::format("{}: traceEvents[{}] ({})", file.string(), i, event_name);
      const bool is_step = event_name.starts_with("ProfilerStep#");
      const auto args_it = e.find("args");
      const bool has_collective = args_it != e.end() && args_it->is_object() && args_it->contains("Collective name");
      if (!is_step && !has_collective) continue;
      for (const char* key : {"ts", "dur"})
        if (!e.contains(key) || !e[key].is_number() || e[key].get<double>() < 0)
          fail(where, fmt::format("field '{}' must be a number >= 0", key));
      const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
      if (is_step) {
        step_starts.push_back(ts);
        continue;
      }
      const auto& args = *args_it;
      const std::string group_name = string_arg(args, "Process Group Name", where);
      const std::string collective = string_arg(args, "Collective name", where);
      std::optional<CallOp> op;
      for (const auto& c : kCollectives)
        if (c.name == collective) op = c.op;
      if (e.value("cat", "") == "kernel") {
        if (op) kernels[group_name].emplace_back(ts, dur);  // a left-out op's kernel has no call
        continue;
      }
      if (event_name != "record_param_comms") continue;
      if (!op) {
        ++left_out[collective];
        continue;
      }
      Pending p;
      Call& call = p.call;
      call.op = *op;
      call.origin = Origin::profiler;
      const std::string dtype_name = string_arg(args, "dtype", where);
      const auto dtype = scalar_type(dtype_name);
      if (!dtype) fail(where, fmt::format("field 'args.dtype': '{}' is not an element type ccbench has", dtype_name));
      call.dtype = *dtype;
      call.count = *op == CallOp::barrier ? 0 : whole_arg(args, "In msg nelems", where);
      if (args.contains("Seq") && args["Seq"].is_number_integer() && args["Seq"].get<std::int64_t>() >= 0)
        call.source_id = args["Seq"].get<std::uint64_t>();
      const int group_size = static_cast<int>(whole_arg(args, "Group size", where));
      if (group_size < 1) fail(where, "field 'args.Group size' must be at least 1");
      if (*op == CallOp::alltoallv) {
        const auto splits = int_list(args.value("In split size", nlohmann::json("[]")), where, "args.In split size");
        if (!splits || splits->size() != static_cast<std::size_t>(group_size))
          fail(where, "field 'args.In split size' must have one entry per member of the group");
        std::uint64_t rows = 0;
        for (auto s : *splits) rows += static_cast<std::uint64_t>(s);
        // Split sizes count rows (the first dimension): elements per peer are rows x the row's size.
        if (rows == 0 || call.count % rows != 0)
          fail(where, "field 'args.In split size' does not divide 'In msg nelems' into rows");
        for (auto s : *splits) call.counts.push_back(static_cast<std::uint64_t>(s) * (call.count / rows));
      }
      if (info(*op).takes_redop) call.redop = RedOp::sum;
      if (info(*op).takes_root) call.root = 0;
      if (info(*op).takes_peer) {
        const char* key = *op == CallOp::send ? "Dst Rank" : "Src Rank";
        call.peer = static_cast<int>(whole_arg(args, key, where));
        if (*call.peer >= group_size) fail(where, fmt::format("field 'args.{}' is outside the group", key));
      }
      call.start_us = ts;
      call.duration_us = dur;
      // The group: its name and, where the list is whole, its members.
      if (!groups.contains(group_name)) {
        const auto members =
            int_list(args.value("Process Group Ranks", nlohmann::json("[]")), where, "args.Process Group Ranks");
        Group g{group_name, {}, true};
        if (members && static_cast<int>(members->size()) == group_size) {
          for (auto m : *members) {
            if (m >= world)
              fail(where, fmt::format("field 'args.Process Group Ranks': rank {} is outside the world", m));
            g.ranks.push_back(static_cast<int>(m));
          }
        } else if (group_size == world) {
          for (int r = 0; r < world; ++r) g.ranks.push_back(r);
          g.members_from_source = false;
          took_world = true;
        } else {
          fail(where, fmt::format("field 'args.Process Group Ranks': the members of a group of {} are not listed",
                                  group_size));
        }
        groups.emplace(group_name, std::move(g));
      }
      call.group = group_name;
      p.group_name = group_name;
      p.cpu_start_us = ts;
      calls.push_back(std::move(p));
    }
    // Kernel times, per group in order, when every call of the group has its kernel.
    std::map<std::string, std::vector<std::size_t>> calls_of_group;
    for (std::size_t i = 0; i < calls.size(); ++i) calls_of_group[calls[i].group_name].push_back(i);
    for (auto& [group_name, list] : calls_of_group) {
      auto& k = kernels[group_name];
      std::ranges::sort(k);
      if (k.size() == list.size()) {
        for (std::size_t j = 0; j < list.size(); ++j) {
          calls[list[j]].call.start_us = k[j].first;
          calls[list[j]].call.duration_us = k[j].second;
        }
      } else if (cpu_timed_ranks.empty() || cpu_timed_ranks.back() != rank) {
        cpu_timed_ranks.push_back(rank);
      }
    }
    std::ranges::sort(step_starts);
    writer.begin_rank(rank, file.string());
    for (auto& p : calls) {
      const auto after = std::ranges::upper_bound(step_starts, p.cpu_start_us);
      if (after != step_starts.begin()) p.call.step = static_cast<std::int64_t>(after - step_starts.begin()) - 1;
      writer.add(std::move(p.call));
    }
    writer.end_rank();
  }
  Provenance prov;
  prov.format = std::string(name(ImportFormat::pytorch_profiler));
  prov.source = "PyTorch 2.x profiler (Kineto) chrome trace, record_param_comms";
  prov.tool_version = options.tool_version;
  prov.not_in_source.push_back("reduce op: not in record_param_comms' arguments; taken as sum");
  prov.not_in_source.push_back("root of broadcast and reduce: not in record_param_comms' arguments; taken as 0");
  if (took_world)
    prov.not_in_source.push_back(
        "group members: a world-sized group's ranks list is cut (over 30 ranks); taken as the world");
  if (!cpu_timed_ranks.empty())
    prov.not_in_source.push_back(fmt::format(
        "call times: on ranks {} a group's calls have no NCCL kernel each; those calls are timed by their CPU event "
        "(the host's enqueue)",
        fmt::join(cpu_timed_ranks, ",")));
  for (const auto& [c, n] : left_out)
    prov.not_in_source.push_back(fmt::format("{} calls of {}: not an op of the trace format, left out", n, c));
  std::vector<Group> group_list;
  for (auto& [id, g] : groups) group_list.push_back(std::move(g));
  summary.ranks = static_cast<int>(by_rank.size());
  summary.not_in_source = prov.not_in_source;
  writer.finish(world, group_list, prov);
  return summary;
}

}  // namespace ccbench::trace
