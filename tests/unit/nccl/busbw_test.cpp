// busbw factors and layouts as nccl-tests defines them (nccl-tests doc/PERFORMANCE.md; docs/method.md), for the ops the
// NCCL backend runs.
#include <gtest/gtest.h>

#include "core/bandwidth.hpp"

namespace ccbench {
namespace {

TEST(NcclBusBw, FactorsFollowNcclTests) {
  for (int n : {1, 2, 8, 16, 64}) {
    const double d = n;
    EXPECT_DOUBLE_EQ(bus_factor(Op::allreduce, n), 2.0 * (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(bus_factor(Op::allgather, n), (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(bus_factor(Op::reduce_scatter, n), (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(bus_factor(Op::alltoall, n), (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(bus_factor(Op::broadcast, n), 1.0) << n;
  }
}

TEST(NcclBusBw, SixteenGpusAllreduce) {
  // 1 GiB allreduce in 10 ms on 16 ranks: algbw 107.37 GB/s, busbw * 30/16.
  const std::uint64_t bytes = 1ull << 30;
  EXPECT_NEAR(algbw_gbps(bytes, 10000.0), 107.374, 1e-3);
  EXPECT_NEAR(busbw_gbps(Op::allreduce, 16, bytes, 10000.0), 107.374 * 30.0 / 16.0, 1e-3);
}

TEST(NcclBusBw, LayoutsMatchNcclInPlaceConventions) {
  // allgather: recv = n * count, the in-place send block is recv + rank * count.
  const OpLayout ag = layout_for(Op::allgather, DType::float16, 1 << 20, 8);
  EXPECT_EQ(ag.count, (1u << 20) / 2 / 8);
  EXPECT_EQ(ag.recv_elements, ag.count * 8);
  EXPECT_EQ(ag.bytes, 1u << 20);
  // reduce_scatter: send = n * recvcount.
  const OpLayout rs = layout_for(Op::reduce_scatter, DType::bfloat16, 1 << 20, 8);
  EXPECT_EQ(rs.send_elements, rs.count * 8);
  EXPECT_EQ(rs.recv_elements, rs.count);
  // fp8: one byte per element.
  const OpLayout ar = layout_for(Op::allreduce, DType::fp8_e4m3, 1000, 4);
  EXPECT_EQ(ar.count, 1000u);
}

}  // namespace
}  // namespace ccbench
