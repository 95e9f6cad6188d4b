// replay's sends and receives on the NCCL backend (docs/replay.md, "Sends and receives"), on the
// recording fake of the backend's CUDA/NCCL calls: a batch is one ncclGroupStart/End group of its
// calls in the traced order, each in its own region; the data check fills each send and poisons
// each receive before it and checks each receive after it, outside the timed group.
#include "backends/point_to_point.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/nccl/nccl_backend.hpp"
#include "core/message_pattern.hpp"
#include "recording_api.hpp"
#include "sweep/channel.hpp"

namespace ccbench {
namespace {

using nccl::testing::RecordingApi;

// The calls logged between two of the test's markers, without the events.
std::vector<std::string> calls_between(const RecordingApi& api, const std::string& begin, const std::string& end) {
  std::vector<std::string> out;
  const auto all = api.calls();
  for (auto i = static_cast<std::size_t>(api.find("# " + begin)) + 1; i < all.size(); ++i) {
    if (all[i] == "# " + end) break;
    if (all[i].rfind("cudaEvent", 0) != 0) out.push_back(all[i]);
  }
  return out;
}

TEST(NcclPointToPoint, ABatchIsOneGroupOfItsCallsInOrder) {
  RecordingApi api;
  LocalChannel channel;
  BackendOptions options;
  options.channel = &channel;
  auto backend = create_nccl_backend(options, api);
  backend->allocate(4096, 4096);
  auto* point_to_point = dynamic_cast<PointToPoint*>(backend.get());
  ASSERT_NE(point_to_point, nullptr);
  // A pipeline's paired send and receive, then a second send: 16 floats (64 bytes), then 4 more
  // at byte 64 of the send buffer; the 8 int32 received at byte 0 of the receive buffer.
  const std::vector<PointToPointCall> batch{
      {true, DType::float32, 16, 0, 0}, {false, DType::int32, 8, 0, 0}, {true, DType::float32, 4, 0, 1}};
  pattern::Params p;
  api.note("fill");
  point_to_point->fill_point_to_point(batch, 0, p);
  api.note("batch");
  point_to_point->time_point_to_point_us(batch);
  api.note("verify");
  const std::vector<std::uint64_t> wrong = point_to_point->verify_point_to_point(batch, 0, p);
  api.note("end");
  EXPECT_EQ(calls_between(api, "fill", "batch"), (std::vector<std::string>{"fill_input", "fill_poison", "fill_input"}));
  EXPECT_EQ(calls_between(api, "batch", "verify"),
            (std::vector<std::string>{"ncclGroupStart", "ncclSend peer=0 count=16 offset=0 blocking=1",
                                      "ncclRecv peer=0 count=8 offset=0 blocking=1",
                                      "ncclSend peer=0 count=4 offset=64 blocking=1", "ncclGroupEnd"}));
  EXPECT_EQ(calls_between(api, "verify", "end"), (std::vector<std::string>{"count_wrong"}));
  EXPECT_EQ(wrong, (std::vector<std::uint64_t>{0, 0, 0}));
}

// The backend fills and checks a message with its kernels for a non-reducing op (alltoallv) under
// the message's parameters: on the host, those formulas give exactly the message's values.
TEST(NcclPointToPoint, TheKernelsFormulasAreTheMessagesPattern) {
  pattern::Params p;
  p.nranks = 4;
  p.seed = 17;
  for (const std::uint64_t sequence : {0ull, 1ull, 5ull}) {
    const pattern::Params message = pattern::message_params(p, 2, sequence);
    for (std::uint64_t i = 0; i < 200; ++i) {
      const std::int64_t value = pattern::message_value(p, 3, 2, sequence, i);
      EXPECT_EQ(pattern::input_value(Op::alltoallv, message, 3, i), value);
      EXPECT_EQ(pattern::expected_value(Op::alltoallv, message, 3, i, 0), value);
    }
  }
  // Another message of the pair, or the same number from another sender, differs somewhere.
  int differ_sequence = 0, differ_sender = 0;
  for (std::uint64_t i = 0; i < 200; ++i) {
    differ_sequence += pattern::message_value(p, 3, 2, 0, i) != pattern::message_value(p, 3, 2, 1, i) ? 1 : 0;
    differ_sender += pattern::message_value(p, 3, 2, 0, i) != pattern::message_value(p, 1, 2, 0, i) ? 1 : 0;
  }
  EXPECT_GT(differ_sequence, 100);
  EXPECT_GT(differ_sender, 100);
}

}  // namespace
}  // namespace ccbench
