// ccbench's trace: per rank, the ordered collective and point-to-point calls a job made, the process
// groups they ran on and where the trace came from (configs/schema/trace.schema.json, trace_version
// 1; docs/replay.md "Trace format"). This header is the reader API `replay` and `model` use:
// trace::load(path) -> Trace. Writing and importing are in trace_writer.hpp and trace_import.hpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/enums.hpp"

namespace ccbench::trace {

inline constexpr int kTraceVersion = 1;

// The calls a trace can hold: a closed set (the schema's enum is this table's names).
enum class CallOp : std::uint8_t {
  allreduce,
  allgather,
  reduce_scatter,
  alltoall,
  alltoallv,
  broadcast,
  reduce,
  send,
  recv,
  barrier,
};

struct CallOpInfo {
  CallOp op;
  std::string_view name;
  bool takes_redop;  // allreduce, reduce_scatter, reduce
  bool takes_root;   // broadcast, reduce
  bool takes_peer;   // send, recv
};

const CallOpInfo& info(CallOp op);
std::string_view name(CallOp op);
std::optional<CallOp> parse_call_op(std::string_view text);  // exact names only
std::span<const CallOp> all_call_ops();

// Which record of the source a call was read from (provenance per call).
enum class Origin : std::uint8_t {
  execution_graph,  // a node of PyTorch's execution graph / execution trace
  profiler,         // an event of PyTorch's profiler (chrome trace)
  linked,           // an execution-graph node and its profiler event, linked
  nccl_log,         // a line of NCCL's NCCL_DEBUG_SUBSYS=COLL log
  nccl_inspector,   // a record of NCCL Inspector's JSON lines
};
std::string_view name(Origin origin);
std::optional<Origin> parse_origin(std::string_view text);

struct Call {
  CallOp op = CallOp::allreduce;
  DType dtype = DType::float32;
  // Elements in this rank's send buffer: allreduce, broadcast, reduce: the buffer; allgather: what
  // this rank contributes; reduce_scatter: its whole input (ranks x its share); alltoall: its whole
  // input; alltoallv: the sum of `counts`; send: what it sends; recv: what it receives; barrier: 0.
  std::uint64_t count = 0;
  std::vector<std::uint64_t> counts;  // alltoallv: elements sent to each member of the group, in order
  std::optional<RedOp> redop;         // ops that reduce
  std::optional<int> root;            // broadcast, reduce: the root's rank in the group
  std::optional<int> peer;            // send, recv: the other rank's rank in the group
  std::string group;                  // Group::id
  std::optional<double> start_us;     // from the source's clock, where it has one
  std::optional<double> duration_us;
  std::optional<double> gap_us;      // compute gap: from the end of the previous call on this rank to this start
  std::optional<std::int64_t> step;  // the step marker the source shows (e.g. ProfilerStep#N)
  Origin origin = Origin::execution_graph;
  std::optional<std::uint64_t> source_id;  // the record's id in the source (node id, opCount, coll_sn)
};

struct Group {
  std::string id;
  std::vector<int> ranks;  // world ranks, in group-rank order
  // False when the source does not say who is in it and the importer took the world (provenance
  // names such groups).
  bool members_from_source = true;
};

struct RankCalls {
  int rank = 0;
  std::string file;  // the source file this rank's calls came from
  std::vector<Call> calls;
};

struct Provenance {
  std::string format;                      // the importer: pytorch-et, nccl-log, ...
  std::string source;                      // what wrote the files, e.g. "PyTorch execution graph observer"
  std::string source_version;              // as the files state it, "" when they do not
  std::string tool_version;                // ccbench's
  std::vector<std::string> not_in_source;  // what the source could not say, one sentence each
};

struct Trace {
  int world_size = 0;
  std::vector<Group> groups;
  std::vector<RankCalls> ranks;  // ascending rank
  Provenance provenance;
};

// Bytes of the call's send buffer on its rank (count x element size).
std::uint64_t send_bytes(const Call& call);

// Reads and checks a trace file. Throws ParseError naming the file, the record
// (ranks[R].calls[I]) and the field for anything the schema refuses or that does not fit
// together (a call on a group that is not listed, a rank outside the world).
Trace load(const std::filesystem::path& path);

}  // namespace ccbench::trace
