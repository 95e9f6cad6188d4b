// The order and the kind of CUDA/NCCL calls the NCCL backend makes, on a recording fake of the
// backend's own call interface (recording_api.hpp): what a GPU run would otherwise be the first to
// show (a hang at the end of every -G run, host overhead in every timed op, capture inside a
// sample, a use after free on abort).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "backends/nccl/nccl_backend.hpp"
#include "core/bandwidth.hpp"
#include "recording_api.hpp"
#include "sweep/channel.hpp"

namespace ccbench {
namespace {

using nccl::testing::RecordingApi;

struct Aborted : std::runtime_error {
  Aborted() : std::runtime_error("the communicator was aborted") {}
};

CaseSpec allreduce_case() {
  CaseSpec c;
  c.op = Op::allreduce;
  c.dtype = DType::float32;
  c.nranks = 1;
  c.layout = layout_for(Op::allreduce, DType::float32, 4096, 1);
  return c;
}

std::unique_ptr<Backend> make(RecordingApi& api, LocalChannel& channel, int graph_launches = 0) {
  BackendOptions options;
  options.channel = &channel;
  options.graph_launches = graph_launches;
  auto backend = create_nccl_backend(options, api, [] { throw Aborted(); });
  backend->allocate(4096, 4096);
  return backend;
}

// What the engine does for one case: fill, the checked op, warm-up, the samples (each sample, from
// the engine's barrier to its max over ranks, marked in the log).
void run_case(Backend& backend, RecordingApi& api, const CaseSpec& c) {
  pattern::Params p;
  backend.fill(c, p);
  backend.launch(c);
  backend.synchronize();
  backend.verify(c, p);
  backend.launch(c);
  backend.synchronize();
  for (int batch : {1, 4}) {
    api.note("sample begin");
    backend.time_batch_us(c, batch);
    api.note("sample end");
  }
}

// Item 2: every measured op runs on a blocking communicator, as in nccl-tests (a nonblocking one
// makes each call an implicit group with a thread created and joined inside the timed region).
TEST(NcclCallOrder, MeasuredOpsRunOnABlockingCommunicator) {
  RecordingApi api;
  LocalChannel channel;
  {
    auto backend = make(api, channel);
    run_case(*backend, api, allreduce_case());
  }
  EXPECT_GE(api.count("ncclAllReduce"), 4);
  EXPECT_EQ(api.count("ncclAllReduce blocking=0"), 0) << "an op ran on a nonblocking communicator";
  // The nonblocking init (polled, for the init timeout) is not what is measured.
  EXPECT_LT(api.find("ncclCommSplit blocking=1"), api.find("ncclAllReduce"));
}

// Item 3: -G's capture and instantiate happen in the case's set-up (fill), never inside a sample
// (after the engine's barrier, where the first probe would carry other ranks' capture skew and,
// with -n auto, choose the batch from it); inside the timed region only graph launches.
TEST(NcclCallOrder, GraphCapturedInSetUpNotInsideASample) {
  RecordingApi api;
  LocalChannel channel;
  auto backend = make(api, channel, /*graph_launches=*/3);
  run_case(*backend, api, allreduce_case());
  bool sample = false;
  bool timed = false;
  int launches_timed = 0;
  for (const std::string& call : api.calls()) {
    if (call == "# sample begin") sample = true;
    if (call == "# sample end") sample = false;
    if (call == "cudaEventRecord start") timed = true;
    if (call == "cudaEventRecord stop") timed = false;
    if (sample) {
      EXPECT_NE(call, "cudaStreamBeginCapture") << "capture inside a sample";
      EXPECT_NE(call, "cudaStreamEndCapture") << "capture inside a sample";
      EXPECT_NE(call, "cudaGraphInstantiate") << "instantiate inside a sample";
    }
    if (timed) {
      EXPECT_EQ(call.find("ncclAllReduce"), std::string::npos) << "an eager op inside a -G timed region: " << call;
      launches_timed += call == "cudaGraphLaunch" ? 1 : 0;
    }
  }
  EXPECT_EQ(launches_timed, 5);  // batch 1, then batch 4
  EXPECT_EQ(api.count("ncclAllReduce blocking=1 capturing"), 3);
  EXPECT_LT(api.find("cudaGraphInstantiate"), api.find("# sample begin"));
}

// Item 1: NCCL's finalize waits, without a timeout, until every graph that captured the
// communicator is destroyed: the graph goes first at the end of a run...
TEST(NcclCallOrder, GraphDestroyedBeforeFinalize) {
  RecordingApi api;
  LocalChannel channel;
  {
    auto backend = make(api, channel, /*graph_launches=*/2);
    run_case(*backend, api, allreduce_case());
  }
  const long finalize = api.find("ncclCommFinalize", api.find("cudaGraphInstantiate"));
  ASSERT_GE(finalize, 0);
  const long destroyed = api.find("cudaGraphExecDestroy");
  ASSERT_GE(destroyed, 0);
  EXPECT_LT(destroyed, finalize);
  EXPECT_FALSE(api.has("USE-AFTER-FREE"));
}

// ...and on an abort (the watchdog's hang or signal path) too.
TEST(NcclCallOrder, GraphDestroyedBeforeAbort) {
  RecordingApi api;
  LocalChannel channel;
  auto backend = make(api, channel, /*graph_launches=*/2);
  run_case(*backend, api, allreduce_case());
  backend->abort();
  const long abort = api.find("ncclCommAbort", api.find("cudaGraphInstantiate"));
  ASSERT_GE(abort, 0) << "abort() did not abort the communicator";
  const long destroyed = api.find("cudaGraphExecDestroy");
  ASSERT_GE(destroyed, 0);
  EXPECT_LT(destroyed, abort);
  EXPECT_EQ(api.count("ncclCommFinalize"), 1);  // the init communicator's only: never the measured one after an abort
  backend.reset();
  EXPECT_FALSE(api.has("USE-AFTER-FREE"));
}

// A new case (another size) destroys the previous case's graph before capturing its own, as
// nccl-tests does after each size: graphs do not pile up holding NCCL's persistent resources.
TEST(NcclCallOrder, OneGraphAliveAtATime) {
  RecordingApi api;
  LocalChannel channel;
  auto backend = make(api, channel, /*graph_launches=*/2);
  CaseSpec c = allreduce_case();
  run_case(*backend, api, c);
  c.layout = layout_for(Op::allreduce, DType::float32, 2048, 1);
  run_case(*backend, api, c);
  EXPECT_EQ(api.count("cudaGraphInstantiate"), 2);
  EXPECT_EQ(api.count("cudaGraphExecDestroy"), 1);
  EXPECT_LT(api.find("cudaGraphExecDestroy"), api.find("cudaStreamBeginCapture", api.find("cudaGraphInstantiate") + 1));
}

// Item 6: the watchdog's abort while the measuring thread is inside an op that hangs. The
// communicator is freed only after the measuring thread is out of its call and has learnt of the
// abort; nothing touches it afterwards.
TEST(NcclCallOrder, AbortNeverFreesTheCommunicatorUnderTheMeasuringThread) {
  RecordingApi api;
  LocalChannel channel;
  auto backend = make(api, channel);
  const CaseSpec c = allreduce_case();
  api.hang_ops();
  const auto before = static_cast<long>(api.calls().size());  // after set-up's own connecting op
  std::atomic<bool> learnt{false};
  std::thread measuring([&] {
    try {
      for (;;) {
        backend->launch(c);
        backend->synchronize();
      }
    } catch (const Aborted&) {
      learnt = true;
    }
  });
  while (api.find("ncclAllReduce", before) < 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const long hung = api.find("ncclAllReduce", before);
  std::thread watchdog([&] { backend->abort(); });  // gives up waiting after 2 s
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  api.release_ops();  // the stuck op returns (as a dead peer's NCCL call returns with an error)
  measuring.join();
  watchdog.join();
  for (int i = 0; i < 500 && !api.has("ncclCommAbort"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(learnt.load()) << "the measuring thread did not learn of the abort";
  EXPECT_FALSE(api.has("USE-AFTER-FREE")) << "a call on the freed communicator";
  const long aborted = api.find("ncclCommAbort", hung);
  ASSERT_GE(aborted, 0);
  EXPECT_LT(api.find("ncclAllReduce returned", hung), aborted);
  EXPECT_EQ(api.find("ncclAllReduce", aborted), -1) << "an op after the abort";
  backend.reset();
  EXPECT_FALSE(api.has("USE-AFTER-FREE"));
}

// Item 4 through the backend: an op failing with ncclSystemError is this rank's failure (exit 2
// class, with the /dev/shm hint), ncclRemoteError a peer's (PeerFailure, exit 4).
TEST(NcclCallOrder, SystemErrorIsReportedAsLocalWithTheShmHint) {
  RecordingApi api;
  LocalChannel channel;
  auto backend = make(api, channel);
  const CaseSpec c = allreduce_case();
  api.fail_ops_with(ncclSystemError);
  try {
    backend->launch(c);
    FAIL() << "no error";
  } catch (const PeerFailure& e) {
    FAIL() << "reported as a failed peer: " << e.what();
  } catch (const BackendError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("allreduce of 4096 bytes (float, sum, out-of-place): ncclAllReduce: ", 0), 0u)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("/dev/shm"), std::string::npos) << e.what();
  }
  api.fail_ops_with(ncclRemoteError);
  EXPECT_THROW(backend->launch(c), PeerFailure);
  api.fail_ops_with(ncclSuccess);
  backend.reset();
  // After an error the communicator is aborted, not finalized (a finalize could wait on a dead peer).
  EXPECT_EQ(api.count("ncclCommFinalize"), 1);  // the init communicator's
  EXPECT_EQ(api.count("ncclCommAbort"), 1);
}

// The ops NCCL runs as calls of their own or as grouped ncclSend/ncclRecv (issue 31): one rank, so
// every peer is rank 0 and the root; the peers of more ranks are grouped_calls_test's.
CaseSpec one_rank_case(Op op, bool in_place) {
  CaseSpec c;
  c.op = op;
  c.dtype = DType::float32;
  c.redop = info(op).is_reduction ? RedOp::sum : RedOp::none;
  c.in_place = in_place;
  c.root = is_rooted(op) ? 0 : -1;
  c.nranks = 1;
  c.layout = layout_for(op, DType::float32, 4096, 1);
  return c;
}

// The calls logged from the first sample on, without the events.
std::vector<std::string> sampled_calls(const RecordingApi& api) {
  std::vector<std::string> out;
  const auto all = api.calls();
  for (auto i = static_cast<std::size_t>(api.find("# sample begin")); i < all.size(); ++i) {
    if (all[i] == "# sample end") break;
    if (all[i].rfind("cudaEvent", 0) != 0 && all[i] != "# sample begin") out.push_back(all[i]);
  }
  return out;
}

TEST(NcclCallOrder, SendrecvIsOneGroupOfASendAndAReceive) {
  RecordingApi api;
  LocalChannel channel;
  auto backend = make(api, channel);
  const CaseSpec c = one_rank_case(Op::sendrecv, false);
  EXPECT_EQ(backend->unsupported(c), std::nullopt);
  EXPECT_EQ(backend->unsupported(one_rank_case(Op::sendrecv, true)),
            "sendrecv has no in-place form (send and receive buffers must differ)");
  run_case(*backend, api, c);
  EXPECT_EQ(sampled_calls(api), (std::vector<std::string>{"ncclGroupStart", "ncclSend peer=0 count=1024 offset=0 blocking=1",
                                                          "ncclRecv peer=0 count=1024 offset=0 blocking=1", "ncclGroupEnd"}));
}

TEST(NcclCallOrder, SendrecvBlocksAreOneGroupOfEveryBlock) {
  // --block-bytes 1K of float: the 1024-element message as 4 sends and 4 receives of 256, one group.
  RecordingApi api;
  LocalChannel channel;
  auto backend = make(api, channel);
  CaseSpec c = one_rank_case(Op::sendrecv, false);
  c.block_elements = 256;
  ASSERT_TRUE(c.posts_blocks());
  run_case(*backend, api, c);
  EXPECT_EQ(sampled_calls(api),
            (std::vector<std::string>{"ncclGroupStart", "ncclSend peer=0 count=256 offset=0 blocking=1",
                                      "ncclSend peer=0 count=256 offset=1024 blocking=1",
                                      "ncclSend peer=0 count=256 offset=2048 blocking=1",
                                      "ncclSend peer=0 count=256 offset=3072 blocking=1",
                                      "ncclRecv peer=0 count=256 offset=0 blocking=1",
                                      "ncclRecv peer=0 count=256 offset=1024 blocking=1",
                                      "ncclRecv peer=0 count=256 offset=2048 blocking=1",
                                      "ncclRecv peer=0 count=256 offset=3072 blocking=1", "ncclGroupEnd"}));
}

TEST(NcclCallOrder, RootedOpsUseNcclsOwnCalls) {
  for (const auto& [op, call] :
       {std::pair{Op::gather, "ncclGather root=0 blocking=1"}, std::pair{Op::scatter, "ncclScatter root=0 blocking=1"},
        std::pair{Op::reduce, "ncclReduce root=0 blocking=1"}}) {
    for (bool in_place : {false, true}) {
      RecordingApi api;
      LocalChannel channel;
      auto backend = make(api, channel);
      run_case(*backend, api, one_rank_case(op, in_place));
      EXPECT_EQ(sampled_calls(api), std::vector<std::string>{call}) << name(op) << " in_place=" << in_place;
      EXPECT_EQ(backend->metadata()["gather_scatter"], "ncclGather/ncclScatter");
    }
  }
}

// Before NCCL 2.28 gather and scatter are grouped calls, as nccl-tests posts them: out of place the
// root moves its own block to itself too; in place it is already there (an empty group).
TEST(NcclCallOrder, GatherAndScatterWithoutNcclsCallsAreGroupedSendsAndReceives) {
  for (const auto& [op, in_place, calls] :
       {std::tuple{Op::gather, false,
                   std::vector<std::string>{"ncclGroupStart", "ncclRecv peer=0 count=1024 offset=0 blocking=1",
                                            "ncclSend peer=0 count=1024 offset=0 blocking=1", "ncclGroupEnd"}},
        std::tuple{Op::scatter, false,
                   std::vector<std::string>{"ncclGroupStart", "ncclSend peer=0 count=1024 offset=0 blocking=1",
                                            "ncclRecv peer=0 count=1024 offset=0 blocking=1", "ncclGroupEnd"}},
        std::tuple{Op::gather, true, std::vector<std::string>{"ncclGroupStart", "ncclGroupEnd"}},
        std::tuple{Op::scatter, true, std::vector<std::string>{"ncclGroupStart", "ncclGroupEnd"}}}) {
    RecordingApi api;
    api.set_gather_scatter(false);
    LocalChannel channel;
    auto backend = make(api, channel);
    run_case(*backend, api, one_rank_case(op, in_place));
    EXPECT_EQ(sampled_calls(api), calls) << name(op) << " in_place=" << in_place;
    EXPECT_EQ(backend->metadata()["gather_scatter"], "grouped ncclSend/ncclRecv");
  }
}

}  // namespace
}  // namespace ccbench
