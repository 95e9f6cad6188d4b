// The trace format and its importers on small hand-written inputs (tests/data/trace/README.md says
// which format each fixture follows), each checked against calls worked out by hand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/types.hpp"
#include "trace/summary.hpp"
#include "trace/trace.hpp"
#include "trace/trace_import.hpp"
#include "trace/trace_writer.hpp"

namespace ccbench::trace {
namespace {

namespace fs = std::filesystem;
const fs::path kData = fs::path(CCBENCH_SOURCE_DIR) / "tests/data/trace";

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "ccbench-trace-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return path_ / name;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename().string());
    return out;
  }

 private:
  fs::path path_;
};

struct Expected {
  CallOp op;
  DType dtype;
  std::uint64_t count;
  std::string group;
};

void expect_calls(const RankCalls& rank, const std::vector<Expected>& expected) {
  ASSERT_EQ(rank.calls.size(), expected.size()) << "rank " << rank.rank;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("rank " + std::to_string(rank.rank) + " call " + std::to_string(i));
    EXPECT_EQ(rank.calls[i].op, expected[i].op);
    EXPECT_EQ(rank.calls[i].dtype, expected[i].dtype);
    EXPECT_EQ(rank.calls[i].count, expected[i].count);
    EXPECT_EQ(rank.calls[i].group, expected[i].group);
  }
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ParseError& e) {
    return e.what();
  }
  return "(no error)";
}

// This machine has no GPU: the NCCL log follows NCCL's user guide (Environment Variables:
// NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,COLL) and the lines its enqueue and init code print
// (tests/data/trace/README.md).
TEST(TraceNcclLog, CallsGroupsAndRanksFromTheLog) {
  TempDir dir;
  const auto out = dir.path() / "t.json";
  const auto summary = import_trace(
      ImportFormat::nccl_log, {kData / "nccl_rank2.log", kData / "nccl_rank0.log", kData / "nccl_rank1.log"}, out, {});
  EXPECT_EQ(summary.ranks, 3);
  EXPECT_EQ(summary.calls, 14u);
  const Trace t = load(out);
  EXPECT_EQ(t.world_size, 3);
  ASSERT_EQ(t.groups.size(), 2u);
  EXPECT_EQ(t.groups[0].id, "0x1111aaaa");
  EXPECT_EQ(t.groups[0].ranks, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(t.groups[1].id, "0x2222bbbb");
  // Comm ranks 0 and 1 of 0x2222bbbb are the files of world ranks 1 and 2.
  EXPECT_EQ(t.groups[1].ranks, (std::vector<int>{1, 2}));
  EXPECT_TRUE(t.groups[1].members_from_source);
  const std::string world = "0x1111aaaa";
  const std::vector<Expected> collectives = {
      {CallOp::allreduce, DType::float32, 262144, world},
      {CallOp::broadcast, DType::int64, 100, world},
      // NCCL's ReduceScatter count is what each rank receives: the send buffer is 3 x 1000.
      {CallOp::reduce_scatter, DType::bfloat16, 3000, world},
      {CallOp::allgather, DType::float16, 33, world},
  };
  ASSERT_EQ(t.ranks.size(), 3u);
  expect_calls(t.ranks[0], collectives);
  auto with_send = collectives;
  with_send.push_back({CallOp::send, DType::int8, 4096, "0x2222bbbb"});
  expect_calls(t.ranks[1], with_send);
  with_send.back().op = CallOp::recv;
  expect_calls(t.ranks[2], with_send);
  EXPECT_EQ(t.ranks[0].calls[1].root, 2);
  EXPECT_EQ(t.ranks[0].calls[2].redop, RedOp::avg);
  EXPECT_EQ(t.ranks[0].calls[3].source_id, 10u);  // opCount is hex
  EXPECT_EQ(t.ranks[1].calls[4].peer, 1);
  EXPECT_EQ(t.ranks[2].calls[4].peer, 0);
  EXPECT_FALSE(t.ranks[0].calls[0].start_us);
  EXPECT_EQ(t.ranks[0].calls[0].origin, Origin::nccl_log);
}

// Lines in the format of NCCL's user guide (NCCL_DEBUG_SUBSYS=INIT,COLL), each with one field broken.
TEST(TraceNcclLog, BadLinesNameFileLineAndField) {
  TempDir dir;
  const std::string init = "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 commId 0xab - Init COMPLETE\n";
  const auto bad_dtype = dir.write(
      "r0.log", init +
                    "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 8 datatype 3 op 0 "
                    "root 0 comm 0x1 [nranks=1] stream 0x2\n");
  const auto out = dir.path() / "t.json";
  EXPECT_EQ(error_of([&] { import_trace(ImportFormat::nccl_log, {bad_dtype}, out, {}); }),
            bad_dtype.string() + ":2: field 'datatype': not an element type ccbench has (ncclDataType_t 0-2, 4, 6-9)");
  const auto bad_count = dir.write(
      "r0.log", init +
                    "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count x8 datatype 7 op 0 "
                    "root 0 comm 0x1 [nranks=1] stream 0x2\n");
  EXPECT_EQ(error_of([&] { import_trace(ImportFormat::nccl_log, {bad_count}, out, {}); }),
            bad_count.string() + ":2: field 'count': 'x8' is not a number");
  // Nothing is left at --out or beside it.
  EXPECT_EQ(dir.names(), std::vector<std::string>{"r0.log"});
}

// This machine has no GPU: the records follow the NCCL Inspector plugin's README (NCCL's
// ext-profiler/inspector: output format v4.0, NCCL_INSPECTOR_DUMP_VERBOSE) (tests/data/trace/README.md).
TEST(TraceNcclInspector, RecordsSizesTimesAndWhatIsMissing) {
  TempDir dir;
  const auto out = dir.path() / "t.json";
  const auto summary = import_trace(ImportFormat::nccl_inspector,
                                    {kData / "inspector_rank1.jsonl", kData / "inspector_rank0.jsonl"}, out, {});
  EXPECT_EQ(summary.calls, 9u);
  const Trace t = load(out);
  ASSERT_EQ(t.ranks.size(), 2u);
  const std::vector<Expected> rank0 = {
      {CallOp::allreduce, DType::uint8, 1048576, "0xaaa"},
      {CallOp::allreduce, DType::uint8, 4096, "0xaaa"},
      {CallOp::reduce_scatter, DType::uint8, 2097152, "0xaaa"},
      {CallOp::broadcast, DType::uint8, 64, "0xaaa"},
  };
  expect_calls(t.ranks[0], rank0);
  auto rank1 = rank0;
  rank1.insert(rank1.begin() + 2, {CallOp::allgather, DType::uint8, 256, "0xbbb"});
  expect_calls(t.ranks[1], rank1);
  const auto& calls = t.ranks[0].calls;
  EXPECT_EQ(calls[0].start_us, 1000);
  EXPECT_EQ(calls[0].duration_us, 50);
  EXPECT_EQ(calls[1].gap_us, 1100 - (1000 + 50));
  EXPECT_FALSE(calls[2].gap_us);  // coll_sn 3 and 4 are missing before it
  EXPECT_EQ(calls[2].source_id, 5u);
  EXPECT_FALSE(calls[3].start_us);  // not verbose: a duration only
  EXPECT_EQ(calls[3].duration_us, 3);
  EXPECT_EQ(calls[3].root, 0);
  ASSERT_EQ(t.groups.size(), 2u);
  EXPECT_EQ(t.groups[1].id, "0xbbb");
  EXPECT_EQ(t.groups[1].ranks, std::vector<int>{1});
  const auto& notes = t.provenance.not_in_source;
  EXPECT_NE(std::ranges::find(notes, std::string("4 calls missing: the plugin writes a communicator's last completed "
                                                 "call at each dump (gaps in coll_sn)")),
            notes.end());
  EXPECT_NE(std::ranges::find(notes, std::string("1 Send records left out: the records do not name the peer")),
            notes.end());
  EXPECT_EQ(t.provenance.source_version, "inspector_output_format_version v4.0");
}

// Records in the NCCL Inspector README's output format v4.0, each with one field broken.
TEST(TraceNcclInspector, BadRecordsNameFileLineAndField) {
  TempDir dir;
  const auto bad = dir.write(
      "insp_rank0.jsonl",
      R"({"header":{"id":"0x1","rank":0,"n_ranks":1,"nnodes":1},"metadata":{"inspector_output_format_version":"v4.0"},"coll_perf":{"coll":"AllReduce","coll_sn":1,"coll_msg_size_bytes":8,"coll_exec_time_us":1}}
{"header":{"id":"0x1","rank":0,"n_ranks":1,"nnodes":1},"metadata":{"inspector_output_format_version":"v4.0"},"coll_perf":{"coll":"AllReduce","coll_msg_size_bytes":8,"coll_exec_time_us":1}}
)");
  const auto out = dir.path() / "t.json";
  EXPECT_EQ(error_of([&] { import_trace(ImportFormat::nccl_inspector, {bad}, out, {}); }),
            bad.string() + ":2: field 'coll_perf.coll_sn' is missing");
  const auto not_json = dir.write("insp_rank0.jsonl", "{\"header\": {\n");
  EXPECT_TRUE(error_of([&] {
                import_trace(ImportFormat::nccl_inspector, {not_json}, out, {});
              }).starts_with(not_json.string() + ":1: not a JSON object on one line"));
  EXPECT_FALSE(fs::exists(out));
}

// This machine has PyTorch 1.13 without Kineto: the 2.x chrome traces follow PyTorch's profiler
// documentation (torch.profiler, export_chrome_trace) and the record_param_comms argument names
// c10d defines (tests/data/trace/README.md).
TEST(TracePytorchProfiler, RecordParamCommsArgumentsAndKernelTimes) {
  TempDir dir;
  const auto out = dir.path() / "t.json";
  // The rank is in distributedInfo, not in the names: b is rank 1.
  const auto summary =
      import_trace(ImportFormat::pytorch_profiler, {kData / "kineto_b.json", kData / "kineto_a.json"}, out, {});
  EXPECT_EQ(summary.calls, 6u);
  const Trace t = load(out);
  ASSERT_EQ(t.ranks.size(), 2u);
  EXPECT_EQ(t.ranks[1].file, (kData / "kineto_b.json").string());
  const std::vector<Expected> rank0 = {
      {CallOp::allreduce, DType::float32, 1024, "0"},
      {CallOp::alltoallv, DType::bfloat16, 60, "0"},
      {CallOp::send, DType::float32, 16, "0"},
  };
  expect_calls(t.ranks[0], rank0);
  auto rank1 = rank0;
  rank1[2].op = CallOp::recv;
  expect_calls(t.ranks[1], rank1);
  const auto& c0 = t.ranks[0].calls;
  // Split sizes [1, 2] are rows of 60 / 3 = 20 elements.
  EXPECT_EQ(c0[1].counts, (std::vector<std::uint64_t>{20, 40}));
  EXPECT_EQ(c0[2].peer, 1);
  EXPECT_EQ(t.ranks[1].calls[2].peer, 0);
  // Rank 0 is timed by its kernels (the gather's kernel has no call), rank 1 by its CPU events.
  EXPECT_EQ(c0[0].start_us, 160);
  EXPECT_EQ(c0[0].duration_us, 80);
  EXPECT_EQ(c0[1].gap_us, 310 - (160 + 80));
  EXPECT_EQ(t.ranks[1].calls[0].start_us, 150);
  EXPECT_EQ(t.ranks[1].calls[0].duration_us, 5);
  EXPECT_EQ(c0[0].step, 0);
  EXPECT_EQ(c0[1].step, 0);
  EXPECT_EQ(c0[2].step, 1);
  EXPECT_EQ(c0[2].source_id, 3u);
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(t.groups[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_TRUE(t.groups[0].members_from_source);
  const auto& notes = t.provenance.not_in_source;
  EXPECT_NE(std::ranges::find(notes, std::string("2 calls of gather: not an op of the trace format, left out")),
            notes.end());
  EXPECT_TRUE(
      std::ranges::any_of(notes, [](const std::string& n) { return n.starts_with("call times: on ranks 1 "); }));
}

// Events in the PyTorch 2.x profiler's chrome-trace form (record_param_comms arguments), each with one
// field broken.
TEST(TracePytorchProfiler, BadArgumentsNameFileEventAndField) {
  TempDir dir;
  const auto bad =
      dir.write("p_rank0.json", R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "record_param_comms",
    "ts": 1, "dur": 1, "args": {"Collective name": "allreduce", "dtype": "ComplexFloat", "In msg nelems": 4,
    "Group size": 1, "Process Group Name": "0", "Process Group Ranks": "[0]"}}]})");
  const auto out = dir.path() / "t.json";
  EXPECT_EQ(error_of([&] { import_trace(ImportFormat::pytorch_profiler, {bad}, out, {}); }),
            bad.string() +
                ": traceEvents[0] (record_param_comms): field 'args.dtype': 'ComplexFloat' is not an element "
                "type ccbench has");
  EXPECT_FALSE(fs::exists(out));
}

TEST(TracePytorchEt, GraphLinkedWithProfiler) {
  TempDir dir;
  const auto out = dir.path() / "t.json";
  const auto summary = import_trace(
      ImportFormat::pytorch_et,
      {kData / "eg_rank0.json", kData / "prof_rank1.json", kData / "eg_rank1.json", kData / "prof_rank0.json"}, out,
      {});
  EXPECT_EQ(summary.calls, 8u);
  const Trace t = load(out);
  ASSERT_EQ(t.ranks.size(), 2u);
  const std::vector<Expected> expected = {
      {CallOp::allreduce, DType::float32, 1024, "world"},
      {CallOp::broadcast, DType::int64, 8, "world"},  // a [2, 4] tensor
      {CallOp::allgather, DType::float16, 6, "world"},
      {CallOp::alltoall, DType::int32, 64, "world"},  // no c10d node: the gloo node alone
  };
  expect_calls(t.ranks[0], expected);
  expect_calls(t.ranks[1], expected);
  const auto& calls = t.ranks[0].calls;
  EXPECT_EQ(calls[1].root, 1);
  EXPECT_EQ(calls[0].redop, RedOp::sum);
  // Times are the gloo events' (the communication), gaps from the previous call's end.
  EXPECT_EQ(calls[0].start_us, 110);
  EXPECT_EQ(calls[0].duration_us, 200);
  EXPECT_FALSE(calls[0].gap_us);
  EXPECT_EQ(calls[1].gap_us, 320 - (110 + 200));
  EXPECT_EQ(calls[2].gap_us, 410 - (320 + 50));
  EXPECT_EQ(calls[3].duration_us, 25.5);
  // Two ProfilerStep#0 markers are two steps.
  EXPECT_EQ(calls[0].step, 0);
  EXPECT_EQ(calls[1].step, 0);
  EXPECT_EQ(calls[2].step, 1);
  EXPECT_EQ(calls[3].step, 1);
  for (const auto& c : calls) EXPECT_EQ(c.origin, Origin::linked);
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_FALSE(t.groups[0].members_from_source);
  const auto& notes = t.provenance.not_in_source;
  const auto has = [&](const std::string& text) {
    return std::ranges::any_of(notes, [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has("process group"));
  EXPECT_TRUE(has("2 all_to_all calls have no c10d node"));
  EXPECT_TRUE(has("2 calls of c10d::gather_"));
  EXPECT_FALSE(has("has no times"));
}

TEST(TracePytorchEt, AProfilerEventLostLeavesThatCallUntimedNotTheNextMistimed) {
  TempDir dir;
  const std::string node = R"({"name": "NAME", "id": ID, "parent": 1, "inputs": [], "input_shapes": [[[N]]],
    "input_types": ["GenericList[Tensor(float)]"]})";
  const auto make = [&](const std::string& name, int id, int n) {
    std::string text = node;
    text.replace(text.find("NAME"), 4, name);
    text.replace(text.find("ID"), 2, std::to_string(id));
    text.replace(text.find("[[[N]]]"), 7,
                 name.starts_with("gloo") ? "[[" + std::to_string(n) + "]]" : "[[[" + std::to_string(n) + "]]]");
    return text;
  };
  const auto eg =
      dir.write("eg_rank0.json", R"({"schema": "1.0.1", "nodes": [)" + make("c10d::allreduce_", 3, 4) + "," +
                                     make("gloo:all_reduce", 4, 4) + "," + make("c10d::allreduce_", 5, 8) + "," +
                                     make("gloo:all_reduce", 6, 8) + "]}");
  // The first call's gloo event is missing: the one left starts after the second c10d event.
  const auto prof = dir.write("prof_rank0.json", R"([
    {"name": "c10d::allreduce_", "ph": "X", "ts": 100, "dur": 5},
    {"name": "c10d::allreduce_", "ph": "X", "ts": 200, "dur": 5},
    {"name": "gloo:all_reduce", "ph": "X", "ts": 210, "dur": 40}])");
  const auto out = dir.path() / "t.json";
  import_trace(ImportFormat::pytorch_et, {eg, prof}, out, {});
  const Trace t = load(out);
  const auto& calls = t.ranks[0].calls;
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].count, 4u);
  EXPECT_EQ(calls[0].origin, Origin::execution_graph);
  EXPECT_FALSE(calls[0].start_us);
  EXPECT_EQ(calls[1].origin, Origin::linked);
  EXPECT_EQ(calls[1].start_us, 210);
  EXPECT_TRUE(std::ranges::any_of(t.provenance.not_in_source, [](const std::string& n) {
    return n.starts_with("1 calls have no profiler event gloo:all_reduce");
  }));
}

// This machine has PyTorch 1.13: the 2.x execution traces follow the node layout of PyTorch's
// ExecutionTraceObserver (torch.profiler's documentation; schema 1.1.1-chakra.0.0.4) and the
// record_param_comms attributes PyTorch defines (tests/data/trace/README.md).
TEST(TracePytorchEt, ExecutionTrace2xFromRecordParamComms) {
  TempDir dir;
  const auto out = dir.path() / "t.json";
  const auto summary =
      import_trace(ImportFormat::pytorch_et, {kData / "et2_rank1.json", kData / "et2_rank0.json"}, out, {});
  EXPECT_EQ(summary.calls, 6u);
  const Trace t = load(out);
  ASSERT_EQ(t.ranks.size(), 2u);
  expect_calls(t.ranks[0], {{CallOp::allreduce, DType::float32, 1024, "0"},
                            {CallOp::alltoallv, DType::bfloat16, 60, "0"},
                            {CallOp::allgather, DType::float16, 32, "1"}});
  expect_calls(t.ranks[1], {{CallOp::allreduce, DType::float32, 1024, "0"},
                            {CallOp::alltoallv, DType::bfloat16, 60, "0"},
                            {CallOp::allgather, DType::float16, 32, "2"}});
  // The c10d::allreduce_ node is not a second call: record_param_comms names each collective once.
  EXPECT_EQ(t.ranks[0].calls[0].source_id, 4u);
  EXPECT_EQ(t.ranks[0].calls[1].counts, (std::vector<std::uint64_t>{20, 40}));
  EXPECT_EQ(t.ranks[0].calls[2].step, 1);
  ASSERT_EQ(t.groups.size(), 3u);
  EXPECT_EQ(t.groups[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(t.groups[1].ranks, std::vector<int>{0});  // global_rank_start 0, pg_size 1
  EXPECT_EQ(t.groups[2].ranks, std::vector<int>{1});
  EXPECT_EQ(t.provenance.source_version, "execution trace schema 1.1.1-chakra.0.0.4");
  EXPECT_TRUE(std::ranges::any_of(t.provenance.not_in_source,
                                  [](const std::string& n) { return n.starts_with("1 calls of send:"); }));
}

// 1.13's graph names no process group: a call site the ranks do not issue alike is on another group
// (or its sizes differ by rank), and the trace says so, with the ranks and their counts, rather
// than inventing a group.
TEST(TracePytorchEt, CallsTheRanksDoNotIssueAlikeAreNamedNotOnTheWorld) {
  TempDir dir;
  const auto allreduce = [](int id, int n) {
    return R"({"name": "c10d::allreduce_", "id": )" + std::to_string(id) +
           R"(, "parent": 1, "inputs": [], "input_shapes": [[[)" + std::to_string(n) +
           R"(]]], "input_types": ["GenericList[Tensor(float)]"]})";
  };
  std::vector<std::filesystem::path> files;
  for (int rank = 0; rank < 4; ++rank) {
    std::string nodes = allreduce(3, 4);
    if (rank != 2) nodes += "," + allreduce(5, 12);  // on a group of ranks 0, 1, 3
    files.push_back(
        dir.write("eg_rank" + std::to_string(rank) + ".json", R"({"schema": "1.0.1", "nodes": [)" + nodes + "]}"));
  }
  const auto out = dir.path() / "t.json";
  import_trace(ImportFormat::pytorch_et, files, out, {});
  const Trace t = load(out);
  EXPECT_EQ(t.ranks[2].calls.size(), 1u);
  EXPECT_EQ(t.ranks[3].calls.size(), 2u);
  const auto& notes = t.provenance.not_in_source;
  EXPECT_EQ(std::ranges::count(notes,
                               "process group of allreduce float x12: the ranks do not issue it alike (calls: 1 on "
                               "ranks 0-1,3, 0 on ranks 2): on a group the source does not name, or with sizes that "
                               "differ by rank; written on the world like every call"),
            1);
  // The site every rank issues once is not named.
  EXPECT_FALSE(std::ranges::any_of(notes, [](const std::string& n) { return n.find("x4:") != std::string::npos; }));
}

TEST(TracePytorchEt, GraphAloneHasNoTimes) {
  TempDir dir;
  const auto out = dir.path() / "t.json";
  import_trace(ImportFormat::pytorch_et, {kData / "eg_rank0.json", kData / "eg_rank1.json"}, out, {});
  const Trace t = load(out);
  for (const auto& c : t.ranks[0].calls) {
    EXPECT_EQ(c.origin, Origin::execution_graph);
    EXPECT_FALSE(c.start_us);
  }
  EXPECT_EQ(t.ranks[0].calls[0].source_id, 3u);
}

TEST(TracePytorchEt, BadNodesNameFileNodeAndField) {
  TempDir dir;
  const auto eg = dir.write("eg_rank0.json", R"({"schema": "1.0.1", "nodes": [
    {"name": "c10d::allreduce_", "id": 3, "parent": 1, "inputs": [], "input_shapes": [[[4]]],
     "input_types": ["GenericList[Tensor(c10::ComplexFloat)]"]}]})");
  const auto out = dir.path() / "t.json";
  EXPECT_EQ(error_of([&] { import_trace(ImportFormat::pytorch_et, {eg}, out, {}); }),
            eg.string() +
                ": nodes[0] (c10d::allreduce_ id 3): field 'input_types'[0]: "
                "'GenericList[Tensor(c10::ComplexFloat)]' is not a tensor type ccbench knows");
  const auto no_rank = dir.write("graph.json", R"({"schema": "1.0.1", "nodes": []})");
  EXPECT_EQ(error_of([&] { import_trace(ImportFormat::pytorch_et, {no_rank}, out, {}); }),
            no_rank.string() + ": the file name states no rank (e.g. eg_rank0.json)");
  const auto bad_ts =
      dir.write("prof_rank0.json", R"([{"name": "gloo:all_reduce", "ph": "X", "ts": "soon", "dur": 1}])");
  const auto good_eg = dir.write("eg_rank0.json", R"({"schema": "1.0.1", "nodes": []})");
  EXPECT_EQ(error_of([&] {
              import_trace(ImportFormat::pytorch_et, {good_eg, bad_ts}, out, {});
            }),
            bad_ts.string() + ": traceEvents[0] (gloo:all_reduce): field 'ts' must be a number >= 0");
  EXPECT_FALSE(fs::exists(out));
}

TEST(TraceFormat, WriterAndLoaderRoundTripEveryField) {
  TempDir dir;
  const auto out = dir.path() / "t.json";
  {
    TraceWriter w(out);
    w.begin_rank(1, "b.log");
    Call v;
    v.op = CallOp::alltoallv;
    v.dtype = DType::bfloat16;
    v.counts = {3, 0, 5};
    v.count = 8;
    v.group = "g";
    v.start_us = 10;
    v.duration_us = 2.5;
    v.step = 7;
    v.origin = Origin::nccl_inspector;
    v.source_id = 42;
    w.add(v);
    Call s;
    s.op = CallOp::send;
    s.dtype = DType::uint8;
    s.count = 1;
    s.peer = 2;
    s.group = "g";
    s.start_us = 20;
    s.origin = Origin::profiler;
    w.add(s);
    w.end_rank();
    w.begin_rank(0, "a.log");
    w.end_rank();
    w.finish(3, {{"g", {2, 0, 1}, true}}, {"nccl-log", "src", "1", "0.1", {"a note"}});
  }
  const Trace t = load(out);
  ASSERT_EQ(t.ranks.size(), 2u);
  EXPECT_EQ(t.ranks[0].rank, 0);  // sorted by rank
  const auto& calls = t.ranks[1].calls;
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].counts, (std::vector<std::uint64_t>{3, 0, 5}));
  EXPECT_EQ(calls[0].step, 7);
  EXPECT_EQ(calls[0].origin, Origin::nccl_inspector);
  EXPECT_EQ(calls[1].peer, 2);
  EXPECT_EQ(calls[1].gap_us, 20 - 12.5);
  EXPECT_EQ(t.groups[0].ranks, (std::vector<int>{2, 0, 1}));
  EXPECT_EQ(t.provenance.not_in_source, std::vector<std::string>{"a note"});
  EXPECT_EQ(send_bytes(calls[0]), 16u);
}

TEST(TraceFormat, LoadNamesRecordAndField) {
  TempDir dir;
  const std::string head =
      R"({"trace_version":1,"world_size":2,"groups":[{"id":"w","ranks":[0,1],"members_from_source":true}],
"provenance":{"format":"nccl-log","source":"","source_version":"","tool_version":"","not_in_source":[]},
"ranks":[{"rank":0,"file":"x","calls":[)";
  const std::string ok =
      R"({"op":"allreduce","dtype":"float","count":4,"redop":"sum","group":"w","origin":"nccl_log"})";
  const auto check = [&](const std::string& second_call, const std::string& message) {
    const auto path = dir.write("t.json", head + ok + "," + second_call + "]}]}");
    EXPECT_EQ(error_of([&] { load(path); }), path.string() + ": ranks[0].calls[1]: " + message);
  };
  check(R"({"op":"gather","dtype":"float","count":4,"group":"w","origin":"nccl_log"})",
        "field 'op' must be one of allreduce, allgather, reduce_scatter, alltoall, alltoallv, broadcast, reduce, send, "
        "recv, barrier");
  check(R"({"op":"allreduce","dtype":"float","count":4,"group":"w","origin":"nccl_log"})",
        "field 'redop' is missing (allreduce)");
  check(R"({"op":"broadcast","dtype":"float","count":4,"root":2,"group":"w","origin":"nccl_log"})",
        "field 'root' is outside the group");
  check(R"({"op":"allgather","dtype":"float","count":-1,"group":"w","origin":"nccl_log"})",
        "field 'count' must be a whole number >= 0");
  check(R"({"op":"allgather","dtype":"float","count":1,"group":"v","origin":"nccl_log"})",
        "field 'group': 'v' is not in groups");
  check(R"({"op":"alltoallv","dtype":"float","count":3,"counts":[1,1],"group":"w","origin":"nccl_log"})",
        "field 'count' must be the sum of 'counts'");
  const auto extra =
      dir.write("x.json", R"({"trace_version":1,"ranks":[],"world_size":1,"groups":[],"provenance":{},"steps":3})");
  EXPECT_EQ(error_of([&] { load(extra); }), extra.string() + ": unknown field 'steps'");
  const auto bad_version = dir.write("v.json", R"({"trace_version":2})");
  EXPECT_EQ(error_of([&] { load(bad_version); }), bad_version.string() + ": field 'trace_version' must be 1");
}

TEST(TraceFormat, NamesTableAndRankFromFileName) {
  for (CallOp op : all_call_ops()) EXPECT_EQ(parse_call_op(name(op)), op);
  EXPECT_EQ(rank_from_file_name("run/eg_rank12.json"), 12);
  EXPECT_EQ(rank_from_file_name("nccl.3.log"), 3);
  EXPECT_EQ(rank_from_file_name("graph.json"), std::nullopt);
}

TEST(TraceSummary, PerStepOpsBytesHistogram) {
  Trace t;
  t.world_size = 2;
  const auto call = [](CallOp op, std::uint64_t count, std::optional<std::int64_t> step) {
    Call c;
    c.op = op;
    c.dtype = DType::float32;
    c.count = count;
    c.group = "w";
    c.step = step;
    if (info(op).takes_redop) c.redop = RedOp::sum;
    return c;
  };
  t.ranks.push_back(
      {0, "a", {call(CallOp::allreduce, 256, 0), call(CallOp::allreduce, 300, 0), call(CallOp::barrier, 0, 1)}});
  t.ranks.push_back({1, "b", {call(CallOp::allreduce, 256, 0)}});
  const auto steps = summarise(t);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].step, 0);
  EXPECT_EQ(steps[0].calls_per_rank, (std::map<int, std::uint64_t>{{0, 2}, {1, 1}}));
  const auto& ar = steps[0].by_op_group.at({CallOp::allreduce, "w"});
  EXPECT_EQ(ar.calls, 3u);
  EXPECT_EQ(ar.bytes, 1024u + 1200u + 1024u);
  // 1024 B is class 10 ([1K, 2K)), 1200 B too.
  EXPECT_EQ(steps[0].size_histogram, (std::map<int, std::uint64_t>{{10, 3}}));
  EXPECT_EQ(steps[1].size_histogram, (std::map<int, std::uint64_t>{{-1, 1}}));
  EXPECT_EQ(steps[1].calls_per_rank, (std::map<int, std::uint64_t>{{0, 1}, {1, 0}}));
}

}  // namespace
}  // namespace ccbench::trace
