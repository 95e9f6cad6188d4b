// NCCL Inspector's JSON lines (the profiler plugin ext-profiler/inspector, output format v4.0):
// one object per line, per communicator and completed collective:
//   {"header": {"id": "0x7f8c..", "rank": 2, "n_ranks": 8, "nnodes": 1},
//    "metadata": {"inspector_output_format_version": "v4.0", ...},
//    "coll_perf": {"coll": "AllReduce", "coll_sn": 1407, "coll_msg_size_bytes": 17179869184,
//                  "coll_exec_time_us": 61974, ..., "event_trace_ts": {"coll_start_ts": ...}}}
// (event_trace_ts only with NCCL_INSPECTOR_DUMP_VERBOSE=1). One file per process, i.e. per rank.
//
// What it cannot say: the element type, reduction and root (only the message size in bytes); the
// peer of a Send/Recv; and not every call: the plugin writes the last completed collective of each
// communicator at each dump interval, so calls between two dumps are missing (gaps in coll_sn).
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_depth.hpp"
#include "trace/comm_groups.hpp"
#include "trace/trace_import.hpp"
#include "trace/trace_writer.hpp"

namespace ccbench::trace {

namespace {

struct Record {
  std::string comm_id;
  int rank = 0;
  int n_ranks = 0;
  std::string version;
  std::string coll;
  std::uint64_t sn = 0;
  std::uint64_t bytes = 0;
  double exec_us = 0;
  std::optional<double> start_us;
};

const nlohmann::json& member(const nlohmann::json& j, const char* object, const char* key, const std::string& where) {
  const auto o = j.find(object);
  if (o == j.end() || !o->is_object()) fail(where, fmt::format("field '{}' is missing", object));
  const auto v = o->find(key);
  if (v == o->end()) fail(where, fmt::format("field '{}.{}' is missing", object, key));
  return *v;
}

std::uint64_t whole(const nlohmann::json& v, const char* object, const char* key, const std::string& where) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    fail(where, fmt::format("field '{}.{}' must be a whole number >= 0", object, key));
  return v.get<std::uint64_t>();
}

Record parse_record(std::string_view line, const std::string& where) {
  check_json_depth(line, where);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    fail(where, fmt::format("not a JSON object on one line ({})", e.what()));
  }
  if (!j.is_object()) fail(where, "a record must be a JSON object");
  Record r;
  const auto& id = member(j, "header", "id", where);
  if (!id.is_string() || id.get<std::string>().empty()) fail(where, "field 'header.id' must be a communicator id");
  r.comm_id = id.get<std::string>();
  r.n_ranks = static_cast<int>(whole(member(j, "header", "n_ranks", where), "header", "n_ranks", where));
  r.rank = static_cast<int>(whole(member(j, "header", "rank", where), "header", "rank", where));
  if (r.n_ranks < 1 || r.n_ranks > (1 << 24) || r.rank >= r.n_ranks)
    fail(where, "field 'header.rank' must be below 'header.n_ranks'");
  const auto& version = member(j, "metadata", "inspector_output_format_version", where);
  if (!version.is_string()) fail(where, "field 'metadata.inspector_output_format_version' must be a string");
  r.version = version.get<std::string>();
  const auto& coll = member(j, "coll_perf", "coll", where);
  if (!coll.is_string()) fail(where, "field 'coll_perf.coll' must be a string");
  r.coll = coll.get<std::string>();
  r.sn = whole(member(j, "coll_perf", "coll_sn", where), "coll_perf", "coll_sn", where);
  r.bytes = whole(member(j, "coll_perf", "coll_msg_size_bytes", where), "coll_perf", "coll_msg_size_bytes", where);
  const auto& exec = member(j, "coll_perf", "coll_exec_time_us", where);
  if (!exec.is_number() || exec.get<double>() < 0)
    fail(where, "field 'coll_perf.coll_exec_time_us' must be a number >= 0");
  r.exec_us = exec.get<double>();
  if (const auto ts = j["coll_perf"].find("event_trace_ts"); ts != j["coll_perf"].end()) {
    const auto start = ts->find("coll_start_ts");
    if (!ts->is_object() || start == ts->end() || !start->is_number())
      fail(where, "field 'coll_perf.event_trace_ts.coll_start_ts' must be a number");
    r.start_us = start->get<double>();
  }
  return r;
}

struct InspectorOp {
  std::string_view name;
  CallOp op;
};
constexpr InspectorOp kOps[] = {
    {"AllReduce", CallOp::allreduce}, {"AllGather", CallOp::allgather}, {"ReduceScatter", CallOp::reduce_scatter},
    {"Broadcast", CallOp::broadcast}, {"Reduce", CallOp::reduce},
};

// Reads every record of a file, calling `each(record, where)`.
template <typename Each>
void for_each_record(const std::filesystem::path& file, Each&& each) {
  LineReader reader(file);
  std::string_view line;
  while (reader.next(line)) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    const std::string where = fmt::format("{}:{}", file.string(), reader.line_number());
    each(parse_record(line, where), where);
  }
}

}  // namespace

ImportSummary import_nccl_inspector(const std::vector<std::filesystem::path>& files, TraceWriter& writer,
                                    const ImportOptions& options) {
  // First pass: each file's communicators and its world rank (its rank in its largest one).
  struct RankFile {
    std::filesystem::path file;
    std::map<std::string, int> comm_rank;  // comm id -> this file's rank in it
  };
  std::map<int, RankFile> ranks;
  int world = 0;
  std::string version;
  for (const auto& file : files) {
    RankFile rf{file, {}};
    int largest = 0, rank = -1;
    for_each_record(file, [&](const Record& r, const std::string& where) {
      if (!version.empty() && r.version != version)
        fail(where, fmt::format("field 'metadata.inspector_output_format_version': '{}' differs from '{}'", r.version,
                                version));
      version = r.version;
      rf.comm_rank[r.comm_id] = r.rank;
      if (r.n_ranks > largest) largest = r.n_ranks, rank = r.rank;
    });
    if (rank < 0) fail(file.string(), "no records");
    world = std::max(world, largest);
    if (ranks.contains(rank))
      fail(file.string(), fmt::format("rank {} again (also {})", rank, ranks[rank].file.string()));
    ranks[rank] = std::move(rf);
  }
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r)
    if (!ranks.contains(r)) fail(files.front().string(), fmt::format("no file for rank {} (ranks must be 0..N-1)", r));
  world = std::max(world, static_cast<int>(ranks.size()));
  CommGroups comm_groups(world);
  for (const auto& [rank, rf] : ranks)
    for (const auto& [id, comm_rank] : rf.comm_rank) comm_groups.seen(id, comm_rank, rank);
  ImportSummary summary;
  std::uint64_t missing = 0;
  std::map<std::string, std::uint64_t> left_out;  // op name -> records
  for (const auto& [rank, rf] : ranks) {
    writer.begin_rank(rank, rf.file.string());
    std::map<std::string, std::uint64_t> last_sn;  // comm id -> last coll_sn seen
    for_each_record(rf.file, [&](const Record& r, const std::string& where) {
      std::optional<CallOp> op;
      for (const auto& e : kOps)
        if (e.name == r.coll) op = e.op;
      if (!op) {
        if (r.coll != "Send" && r.coll != "Recv" && r.coll != "SendRecv")
          fail(where, fmt::format("field 'coll_perf.coll': '{}' is not a collective the trace format has", r.coll));
        ++left_out[r.coll];
        return;
      }
      // A call after a coll_sn gap does not follow the previous record: no compute gap across it.
      if (const auto last = last_sn.find(r.comm_id); last != last_sn.end()) {
        if (r.sn <= last->second) fail(where, "field 'coll_perf.coll_sn' does not increase within its communicator");
        if (r.sn > last->second + 1) {
          missing += r.sn - last->second - 1;
          writer.break_gap();
        }
      }
      last_sn[r.comm_id] = r.sn;
      Call call;
      call.op = *op;
      call.dtype = DType::uint8;
      call.count = r.bytes;
      if (info(*op).takes_redop) call.redop = RedOp::sum;
      if (info(*op).takes_root) call.root = 0;
      call.group = comm_groups.group_for(r.comm_id, r.n_ranks, where, "header.id");
      call.start_us = r.start_us;
      call.duration_us = r.exec_us;
      call.origin = Origin::nccl_inspector;
      call.source_id = r.sn;
      writer.add(std::move(call));
    });
    writer.end_rank();
  }
  Provenance p;
  p.format = std::string(name(ImportFormat::nccl_inspector));
  p.source = "NCCL Inspector (NCCL profiler plugin) JSON lines";
  p.source_version = "inspector_output_format_version " + version;
  p.tool_version = options.tool_version;
  p.not_in_source.push_back(
      "element type: the records give the message size in bytes only; taken as uint8, count = bytes");
  p.not_in_source.push_back("reduce op and root: not in the records; taken as sum and 0");
  p.not_in_source.push_back("step markers: the records have none");
  if (missing > 0)
    p.not_in_source.push_back(fmt::format(
        "{} calls missing: the plugin writes a communicator's last completed call at each dump (gaps in coll_sn)",
        missing));
  for (const auto& [op_name, n] : left_out)
    p.not_in_source.push_back(fmt::format("{} {} records left out: the records do not name the peer", n, op_name));
  if (comm_groups.took_world())
    p.not_in_source.push_back("group membership: a communicator not in every member's file is taken as the world");
  summary.ranks = static_cast<int>(ranks.size());
  summary.not_in_source = p.not_in_source;
  writer.finish(world, comm_groups.groups(), p);
  return summary;
}

}  // namespace ccbench::trace
