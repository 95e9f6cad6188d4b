// The order and the kind of CUDA/NCCL calls the NCCL backend makes, on a recording fake of the
// backend's own call interface (recording_api.hpp): what a GPU run would otherwise be the first to
// show (a hang at the end of every -G run, host overhead in every timed op, capture inside a
// sample, a use after free on abort).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

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

}  // namespace
}  // namespace ccbench
