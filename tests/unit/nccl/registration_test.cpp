// run -R 1|2 (buffer registration) on the recording fake of the backend's call interface: each
// buffer registered once per communicator and size, a window registered for the same size on every
// rank, every registration undone before its buffer is freed and before the communicator goes (on
// the clean ending, after an error and on the watchdog's abort), and the version gate.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "backends/nccl/nccl_backend.hpp"
#include "core/error.hpp"
#include "recording_api.hpp"
#include "sweep/channel.hpp"

namespace ccbench {
namespace {

using nccl::testing::RecordingApi;

struct Aborted : std::runtime_error {
  Aborted() : std::runtime_error("the communicator was aborted") {}
};

std::unique_ptr<Backend> make(RecordingApi& api, LocalChannel& channel, BufferRegistration mode) {
  BackendOptions options;
  options.channel = &channel;
  options.registration = mode;
  return create_nccl_backend(options, api, [] { throw Aborted(); });
}

CaseSpec allreduce_case() {
  CaseSpec c;
  c.op = Op::allreduce;
  c.dtype = DType::float32;
  c.nranks = 1;
  c.layout = layout_for(Op::allreduce, DType::float32, 4096, 1);
  return c;
}

// The buffers' and the communicators' lives, in order. buf=0 is the backend's wrong-element
// counter (8 bytes), buf=1 its host copy, the send and receive buffers come next.
std::vector<std::string> buffer_calls(const RecordingApi& api) {
  std::vector<std::string> out;
  for (const std::string& call : api.calls()) {
    for (const char* prefix : {"cudaMalloc", "cudaFree", "ncclMemAlloc", "ncclMemFree", "ncclCommRegister",
                               "ncclCommDeregister", "ncclCommWindow", "ncclCommFinalize", "ncclCommDestroy",
                               "ncclCommAbort", "ncclAllReduce blocking=1", "USE-AFTER-FREE"}) {
      if (call.rfind(prefix, 0) == 0) out.push_back(call);
    }
  }
  return out;
}

const std::vector<std::string> kSetUp = {"cudaMalloc buf=0 bytes=8", "ncclCommFinalize", "ncclCommDestroy",
                                         "ncclAllReduce blocking=1"};  // the init communicator, the connect

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(NcclRegistration, NoneRegistersNothing) {
  RecordingApi api;
  LocalChannel channel;
  {
    auto backend = make(api, channel, BufferRegistration::none);
    backend->allocate(4096, 4096);
    EXPECT_EQ(backend->metadata()["buffer_registration"], "none");
  }
  EXPECT_EQ(buffer_calls(api),
            joined(kSetUp, {"cudaMalloc buf=2 bytes=4096", "cudaMalloc buf=3 bytes=4096", "ncclCommFinalize",
                            "ncclCommDestroy", "cudaFree buf=2", "cudaFree buf=3", "cudaFree buf=0"}));
}

// -R 1: ncclCommRegister of each buffer once, at allocation (outside every timed op); a buffer that
// grows is deregistered before it is freed and its successor registered once; the end deregisters
// (latest first) before ncclCommFinalize/ncclCommDestroy, and frees after.
TEST(NcclRegistration, CommRegisterOncePerBufferAndSize) {
  RecordingApi api;
  LocalChannel channel;
  {
    auto backend = make(api, channel, BufferRegistration::comm_register);
    backend->allocate(4096, 4096);
    backend->allocate(4096, 4096);  // the same sizes: nothing new
    const CaseSpec c = allreduce_case();
    pattern::Params p;
    backend->fill(c, p);
    backend->time_batch_us(c, 2);
    backend->allocate(8192, 4096);  // the send buffer grows
    EXPECT_EQ(backend->metadata()["buffer_registration"], "comm_register");
  }
  EXPECT_EQ(
      buffer_calls(api),
      joined(kSetUp, {"cudaMalloc buf=2 bytes=4096", "ncclCommRegister buf=2 bytes=4096", "cudaMalloc buf=3 bytes=4096",
                      "ncclCommRegister buf=3 bytes=4096", "ncclAllReduce blocking=1", "ncclAllReduce blocking=1",
                      "ncclCommDeregister buf=2", "cudaFree buf=2", "cudaMalloc buf=4 bytes=8192",
                      "ncclCommRegister buf=4 bytes=8192", "ncclCommDeregister buf=4", "ncclCommDeregister buf=3",
                      "ncclCommFinalize", "ncclCommDestroy", "cudaFree buf=4", "cudaFree buf=3", "cudaFree buf=0"}));
}

// -R 2: buffers from ncclMemAlloc in windows whose size is a multiple of NCCL's window alignment
// (4096); window deregistration before the communicator, ncclMemFree after.
TEST(NcclRegistration, SymmetricWindowsFromNcclMemAlloc) {
  RecordingApi api;
  LocalChannel channel;
  {
    auto backend = make(api, channel, BufferRegistration::symmetric_window);
    backend->allocate(100, 5000);
    EXPECT_EQ(backend->metadata()["buffer_registration"], "symmetric_window");
  }
  EXPECT_EQ(buffer_calls(api),
            joined(kSetUp, {"ncclMemAlloc buf=2 bytes=4096", "ncclCommWindowRegister buf=2 bytes=4096",
                            "ncclMemAlloc buf=3 bytes=8192", "ncclCommWindowRegister buf=3 bytes=8192",
                            "ncclCommWindowDeregister buf=3", "ncclCommWindowDeregister buf=2", "ncclCommFinalize",
                            "ncclCommDestroy", "ncclMemFree buf=2", "ncclMemFree buf=3", "cudaFree buf=0"}));
}

// After an op failed the communicator is aborted: -R 1's (local) deregistrations still come first;
// -R 2's window deregistration is collective and a failed peer may never join it, so it is left to
// ncclCommAbort (which releases the windows); the memory is freed after the abort either way.
TEST(NcclRegistration, ErrorEndingDeregistersBeforeTheAbortAndTheFree) {
  for (const BufferRegistration mode : {BufferRegistration::comm_register, BufferRegistration::symmetric_window}) {
    RecordingApi api;
    LocalChannel channel;
    {
      auto backend = make(api, channel, mode);
      backend->allocate(4096, 4096);
      api.fail_ops_with(ncclSystemError);
      EXPECT_THROW(backend->launch(allreduce_case()), BackendError);
    }
    std::vector<std::string> ending;
    if (mode == BufferRegistration::comm_register) {
      ending = {"ncclCommDeregister buf=3", "ncclCommDeregister buf=2", "ncclCommAbort",
                "cudaFree buf=2",           "cudaFree buf=3",           "cudaFree buf=0"};
    } else {
      ending = {"ncclCommAbort", "ncclMemFree buf=2", "ncclMemFree buf=3", "cudaFree buf=0"};
    }
    const auto calls = buffer_calls(api);
    ASSERT_GE(calls.size(), ending.size());
    EXPECT_EQ(std::vector<std::string>(calls.end() - static_cast<long>(ending.size()), calls.end()), ending)
        << name(mode);
    EXPECT_EQ(api.count("ncclCommWindowDeregister"), 0) << name(mode);
    EXPECT_FALSE(api.has("USE-AFTER-FREE")) << name(mode);
  }
}

// The interrupted ending (the watchdog's abort on a signal or -T): -R 1's registrations go before
// ncclCommAbort, and nothing touches the communicator afterwards.
TEST(NcclRegistration, AbortDeregistersBeforeTheCommunicatorGoes) {
  RecordingApi api;
  LocalChannel channel;
  auto backend = make(api, channel, BufferRegistration::comm_register);
  backend->allocate(4096, 4096);
  backend->abort();
  const auto calls = buffer_calls(api);
  const std::vector<std::string> ending = {"ncclCommDeregister buf=3", "ncclCommDeregister buf=2", "ncclCommAbort"};
  ASSERT_GE(calls.size(), ending.size());
  EXPECT_EQ(std::vector<std::string>(calls.end() - 3, calls.end()), ending);
  backend.reset();
  EXPECT_EQ(api.count("ncclCommDeregister"), 2);
  EXPECT_FALSE(api.has("USE-AFTER-FREE"));
  EXPECT_EQ(api.count("cudaFree buf=2"), 1);
}

// The version gate: exit 2's UsageError names the flag, the version needed and the one loaded,
// before any communicator exists.
TEST(NcclRegistration, OlderNcclIsRefusedNamingTheFlagAndTheVersion) {
  for (const auto& [mode, version, message] :
       {std::tuple{BufferRegistration::symmetric_window, NCCL_VERSION(2, 26, 6),
                   "-R/--register 2: symmetric windows (ncclCommWindowRegister) need NCCL 2.27 or newer; the loaded "
                   "NCCL is 2.26.6"},
        std::tuple{BufferRegistration::comm_register, NCCL_VERSION(2, 18, 3),
                   "-R/--register 1: ncclCommRegister needs NCCL 2.19 or newer; the loaded NCCL is 2.18.3"}}) {
    RecordingApi api;
    api.set_version(version);
    LocalChannel channel;
    try {
      make(api, channel, mode);
      ADD_FAILURE() << "no error for " << name(mode);
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
    EXPECT_FALSE(api.has("ncclCommInitRankConfig")) << name(mode);
  }
  // Where the loaded NCCL has the calls, both modes start.
  for (const BufferRegistration mode : {BufferRegistration::comm_register, BufferRegistration::symmetric_window}) {
    RecordingApi api;
    api.set_version(NCCL_VERSION(2, 27, 3));
    LocalChannel channel;
    EXPECT_NO_THROW(make(api, channel, mode)) << name(mode);
  }
}

TEST(NcclRegistration, FlagTakesZeroOneOrTwo) {
  EXPECT_EQ(buffer_registration_flag("0"), BufferRegistration::none);
  EXPECT_EQ(buffer_registration_flag("1"), BufferRegistration::comm_register);
  EXPECT_EQ(buffer_registration_flag("2"), BufferRegistration::symmetric_window);
  try {
    buffer_registration_flag("3");
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "-R/--register: expected 0 (none), 1 (ncclCommRegister) or 2 (symmetric windows), got '3'");
  }
}

}  // namespace
}  // namespace ccbench
