// NCCL's own debug log with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL (or ALL), one file per rank.
//
// Each call is one line written by NCCL's enqueue (src/enqueue.cc):
//   HOST:PID:TID [DEV] NCCL INFO AllReduce: opCount 3 sendbuff 0x.. recvbuff 0x.. count 1024
//     datatype 7 op 0 root 0 comm 0x55d0 [nranks=8] stream 0x..
// (opCount in hex). The communicator's rank comes from its init line
//   ... NCCL INFO comm 0x55d0 rank 3 nranks 8 cudaDev 3 nvmlDev 3 busId 53000 commId 0x9a.. - Init COMPLETE
// Groups: communicators with the same commId across the files are one group whose members are the
// ranks of those files; without a commId the group is known by its pointer and size only.
// The log has no times per call and no step marker.
#include <fmt/format.h>

#include <charconv>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/types.hpp"
#include "trace/comm_groups.hpp"
#include "trace/trace_import.hpp"
#include "trace/trace_writer.hpp"

namespace ccbench::trace {

namespace {

// The word after `key ` in `line` ("count 1024" -> "1024"); empty when the key is not there.
std::string_view value_after(std::string_view line, std::string_view key) {
  std::size_t at = 0;
  while ((at = line.find(key, at)) != std::string_view::npos) {
    const bool starts_word = at == 0 || line[at - 1] == ' ' || line[at - 1] == '[';
    const std::size_t after = at + key.size();
    if (starts_word && after < line.size() && (line[after] == ' ' || line[after] == '=')) {
      std::string_view rest = line.substr(after + 1);
      return rest.substr(0, std::min(rest.find_first_of(" ]"), rest.size()));
    }
    at = after;
  }
  return {};
}

template <typename Int>
Int number_after(std::string_view line, std::string_view key, const std::string& where, int base = 10) {
  std::string_view text = value_after(line, key);
  if (base == 16 && text.starts_with("0x")) text.remove_prefix(2);
  Int value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    fail(where, fmt::format("field '{}': '{}' is not a number", key, text));
  return value;
}

struct NcclOp {
  std::string_view name;
  CallOp op;
};
constexpr NcclOp kNcclOps[] = {
    {"AllReduce", CallOp::allreduce}, {"AllGather", CallOp::allgather}, {"ReduceScatter", CallOp::reduce_scatter},
    {"Broadcast", CallOp::broadcast}, {"Bcast", CallOp::broadcast},     {"Reduce", CallOp::reduce},
    {"Send", CallOp::send},           {"Recv", CallOp::recv},
};

// ncclDataType_t (nccl.h), in its order.
std::optional<DType> nccl_dtype(int value) {
  switch (value) {
    case 0:
      return DType::int8;
    case 1:
      return DType::uint8;
    case 2:
      return DType::int32;
    case 4:
      return DType::int64;
    case 6:
      return DType::float16;
    case 7:
      return DType::float32;
    case 8:
      return DType::float64;
    case 9:
      return DType::bfloat16;
    default:
      return std::nullopt;  // 3 uint32, 5 uint64 and newer ones: no ccbench element type
  }
}
// ncclRedOp_t (nccl.h): sum, prod, max, min, avg.
std::optional<RedOp> nccl_redop(int value) {
  switch (value) {
    case 0:
      return RedOp::sum;
    case 1:
      return RedOp::prod;
    case 2:
      return RedOp::max;
    case 3:
      return RedOp::min;
    case 4:
      return RedOp::avg;
    default:
      return std::nullopt;
  }
}

struct CommInfo {
  int rank = -1;
  int nranks = 0;
  std::string comm_id;  // commId, "" when the init line has none
};

// The init lines of a file: comm pointer -> its rank, size and id.
std::map<std::string, CommInfo> read_comms(const std::filesystem::path& file) {
  std::map<std::string, CommInfo> comms;
  LineReader reader(file);
  std::string_view line;
  while (reader.next(line)) {
    if (line.find("NCCL INFO comm 0x") == std::string_view::npos || line.find("nranks") == std::string_view::npos)
      continue;
    const std::string where = fmt::format("{}:{}", file.string(), reader.line_number());
    CommInfo c;
    c.rank = number_after<int>(line, "rank", where);
    c.nranks = number_after<int>(line, "nranks", where);
    if (c.nranks < 1 || c.rank < 0 || c.rank >= c.nranks) fail(where, "field 'rank': outside nranks");
    c.comm_id = std::string(value_after(line, "commId"));
    comms[std::string(value_after(line, "comm"))] = c;
  }
  return comms;
}

}  // namespace

ImportSummary import_nccl_log(const std::vector<std::filesystem::path>& files, TraceWriter& writer,
                              const ImportOptions& options) {
  // First pass: each file's communicators, and the file's world rank (its rank in its largest one,
  // else the rank in its name).
  struct RankFile {
    std::filesystem::path file;
    std::map<std::string, CommInfo> comms;
  };
  std::map<int, RankFile> ranks;
  int world = 0;
  for (const auto& file : files) {
    auto comms = read_comms(file);
    std::optional<int> rank;
    int largest = 0;
    for (const auto& [ptr, c] : comms)
      if (c.nranks > largest) largest = c.nranks, rank = c.rank;
    if (!rank) rank = rank_from_file_name(file);
    if (!rank)
      fail(file.string(),
           "no communicator init line (NCCL INFO comm ... rank R nranks N) and no rank in the file name");
    world = std::max(world, largest);
    if (ranks.contains(*rank))
      fail(file.string(), fmt::format("rank {} again (also {})", *rank, ranks[*rank].file.string()));
    ranks[*rank] = {file, std::move(comms)};
  }
  world = std::max(world, static_cast<int>(ranks.size()));
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r)
    if (!ranks.contains(r)) fail(files.front().string(), fmt::format("no file for rank {} (ranks must be 0..N-1)", r));
  CommGroups comm_groups(world);
  for (const auto& [rank, rf] : ranks)
    for (const auto& [ptr, c] : rf.comms) comm_groups.seen(c.comm_id, c.rank, rank);
  const auto group_for = [&](int rank, const std::string& ptr, int nranks, const std::string& where) {
    const auto& comms = ranks[rank].comms;
    const auto c = comms.find(ptr);
    return comm_groups.group_for(c == comms.end() ? std::string() : c->second.comm_id, nranks, where, "comm");
  };
  ImportSummary summary;
  for (const auto& [rank, rf] : ranks) {
    writer.begin_rank(rank, rf.file.string());
    LineReader reader(rf.file);
    std::string_view line;
    while (reader.next(line)) {
      const auto info_at = line.find("NCCL INFO ");
      if (info_at == std::string_view::npos || line.find(": opCount") == std::string_view::npos) continue;
      std::string_view rest = line.substr(info_at + 10);
      const std::string_view op_name = rest.substr(0, rest.find(':'));
      const std::string where = fmt::format("{}:{}", rf.file.string(), reader.line_number());
      std::optional<CallOp> op;
      for (const auto& e : kNcclOps)
        if (e.name == op_name) op = e.op;
      if (!op) fail(where, fmt::format("field 'op': '{}' is not a collective the trace format has", op_name));
      Call call;
      call.op = *op;
      call.origin = Origin::nccl_log;
      call.source_id = number_after<std::uint64_t>(line, "opCount", where, 16);
      const auto count = number_after<std::uint64_t>(line, "count", where);
      const auto dtype = nccl_dtype(number_after<int>(line, "datatype", where));
      if (!dtype) fail(where, "field 'datatype': not an element type ccbench has (ncclDataType_t 0-2, 4, 6-9)");
      call.dtype = *dtype;
      const int nranks = number_after<int>(line, "nranks", where);
      if (nranks < 1) fail(where, "field 'nranks' must be at least 1");
      // NCCL's count is per rank: ReduceScatter's is what each rank receives.
      call.count = *op == CallOp::reduce_scatter ? count * static_cast<std::uint64_t>(nranks) : count;
      if (trace::info(*op).takes_redop) {
        const auto redop = nccl_redop(number_after<int>(line, "op", where));
        if (!redop) fail(where, "field 'op': not a reduction ccbench has (ncclRedOp_t 0-4)");
        call.redop = redop;
      }
      const int root = number_after<int>(line, "root", where);
      if (root < 0 || root >= nranks) fail(where, "field 'root': outside the communicator");
      if (trace::info(*op).takes_root) call.root = root;
      if (trace::info(*op).takes_peer) call.peer = root;  // NCCL logs a send/recv's peer as its root
      const std::string ptr(value_after(line, "comm"));
      if (ptr.empty()) fail(where, "field 'comm' is missing");
      call.group = group_for(rank, ptr, nranks, where);
      writer.add(std::move(call));
    }
    writer.end_rank();
  }
  Provenance p;
  p.format = std::string(name(ImportFormat::nccl_log));
  p.source = "NCCL debug log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL)";
  p.tool_version = options.tool_version;
  p.not_in_source.push_back("call start and duration: the log has no times per call");
  p.not_in_source.push_back("step markers: the log has none");
  if (comm_groups.took_world())
    p.not_in_source.push_back(
        "group membership: a communicator without a commId on its init line is taken as the world");
  const std::vector<Group> group_list = comm_groups.groups();
  summary.ranks = static_cast<int>(ranks.size());
  summary.not_in_source = p.not_in_source;
  writer.finish(world, group_list, p);
  return summary;
}

}  // namespace ccbench::trace
