// The NCCL backend's matrix ops (alltoallv, moe_*) on the recording fake of its call interface: one
// group of a ncclSend and a ncclRecv per peer block with the matrix's counts, an empty block not
// posted, moe_pair's combine as a second group, and the check run once per received block. On one
// rank (LocalChannel), so the only peer is the rank itself; a GPU run is scripts/device-check.sh.
#include <gtest/gtest.h>

#include <memory>

#include "backends/nccl/nccl_backend.hpp"
#include "recording_api.hpp"
#include "sweep/channel.hpp"

namespace ccbench {
namespace {

using nccl::testing::RecordingApi;

CaseSpec matrix_op(Op op, std::uint64_t bytes) {
  CaseSpec c;
  c.op = op;
  c.dtype = DType::float32;
  c.redop = RedOp::none;
  c.nranks = 1;
  auto mc = std::make_shared<MatrixCase>(matrix_case(op, TrafficMatrix{1, {bytes}}, 0, 4));
  c.layout = matrix_layout(*mc, 4);
  c.matrix = std::move(mc);
  return c;
}

std::unique_ptr<Backend> make(RecordingApi& api, LocalChannel& channel) {
  BackendOptions options;
  options.channel = &channel;
  auto backend = create_nccl_backend(options, api, [] {});
  backend->allocate(4096, 4096);
  return backend;
}

TEST(NcclAlltoallv, OneGroupOfSendAndReceivePerPeerBlock) {
  RecordingApi api;
  LocalChannel channel;
  auto backend = make(api, channel);
  const CaseSpec c = matrix_op(Op::alltoallv, 64);  // 16 floats to itself
  EXPECT_EQ(backend->unsupported(c), std::nullopt);
  api.note("launch");
  backend->launch(c);
  backend->synchronize();
  const long at = api.find("# launch");
  const long start = api.find("ncclGroupStart", at);
  ASSERT_GE(start, 0);
  const auto calls = api.calls();
  EXPECT_EQ(calls[static_cast<std::size_t>(start + 1)], "ncclSend peer=0 count=16 offset=0 blocking=1");
  EXPECT_EQ(calls[static_cast<std::size_t>(start + 2)], "ncclRecv peer=0 count=16 offset=0 blocking=1");
  EXPECT_EQ(calls[static_cast<std::size_t>(start + 3)], "ncclGroupEnd");
}

TEST(NcclAlltoallv, AnEmptyBlockIsNotPosted) {
  RecordingApi api;
  LocalChannel channel;
  auto backend = make(api, channel);
  backend->launch(matrix_op(Op::alltoallv, 0));
  backend->synchronize();
  EXPECT_EQ(api.count("ncclSend"), 0);
  EXPECT_EQ(api.count("ncclRecv"), 0);
  EXPECT_EQ(api.count("ncclGroupStart"), 1);
}

TEST(NcclAlltoallv, PairIsDispatchThenCombine) {
  RecordingApi api;
  LocalChannel channel;
  auto backend = make(api, channel);
  const CaseSpec c = matrix_op(Op::moe_pair, 32);
  backend->launch(c);
  backend->synchronize();
  EXPECT_EQ(api.count("ncclGroupStart"), 2);
  EXPECT_EQ(api.count("ncclSend peer=0 count=8"), 2);
  EXPECT_EQ(api.count("ncclRecv peer=0 count=8"), 2);
  // The check: the dispatch's one block, then the combine's output.
  const long before = api.count("count_wrong");
  backend->verify(c, pattern::Params{});
  EXPECT_EQ(api.count("count_wrong") - before, 2);
}

TEST(NcclAlltoallv, RefusedWithoutAMatrixOrInPlace) {
  RecordingApi api;
  LocalChannel channel;
  auto backend = make(api, channel);
  CaseSpec c = matrix_op(Op::moe_dispatch, 16);
  c.in_place = true;
  EXPECT_EQ(backend->unsupported(c), "moe_dispatch runs out of place only (its send and receive counts differ)");
  c.matrix.reset();
  c.in_place = false;
  EXPECT_EQ(backend->unsupported(c),
            "moe_dispatch needs its per-peer counts: ccbench run --matrix FILE.csv or --moe SPEC");
}

}  // namespace
}  // namespace ccbench
