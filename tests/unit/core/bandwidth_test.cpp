// Bus-bandwidth factors and layouts against values computed by hand from nccl-tests' conventions.
#include <gtest/gtest.h>

#include "core/bandwidth.hpp"

namespace ccbench {
namespace {

TEST(BusFactor, HandComputed) {
  EXPECT_DOUBLE_EQ(bus_factor(Op::allreduce, 2), 1.0);      // 2*(2-1)/2
  EXPECT_DOUBLE_EQ(bus_factor(Op::allreduce, 4), 1.5);      // 2*3/4
  EXPECT_DOUBLE_EQ(bus_factor(Op::allreduce, 8), 1.75);     // 2*7/8
  EXPECT_DOUBLE_EQ(bus_factor(Op::allgather, 4), 0.75);     // 3/4
  EXPECT_DOUBLE_EQ(bus_factor(Op::reduce_scatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Op::alltoall, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(Op::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::allreduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::fabric_pingpong, 2), 1.0);
}

TEST(Bandwidth, GigabytesAreDecimal) {
  // 1 MiB in 100 us: 1048576 / 1e-4 s = 10.48576 GB/s.
  EXPECT_NEAR(algbw_gbps(1048576, 100.0), 10.48576, 1e-12);
  // allreduce on 8 ranks: busbw = algbw * 1.75.
  EXPECT_NEAR(busbw_gbps(Op::allreduce, 8, 1048576, 100.0), 18.35008, 1e-12);
  EXPECT_EQ(algbw_gbps(1024, 0.0), 0.0);
}

TEST(Layout, NcclTestsCounts) {
  // allreduce: count = S / 4 for float.
  auto l = layout_for(Op::allreduce, DType::float32, 1048576, 8);
  EXPECT_EQ(l.count, 262144u);
  EXPECT_EQ(l.bytes, 1048576u);
  // allgather: count is per rank; S is the total.
  l = layout_for(Op::allgather, DType::float32, 1048576, 8);
  EXPECT_EQ(l.count, 32768u);
  EXPECT_EQ(l.send_elements, 32768u);
  EXPECT_EQ(l.recv_elements, 262144u);
  EXPECT_EQ(l.bytes, 1048576u);
  // reduce_scatter mirrors allgather.
  l = layout_for(Op::reduce_scatter, DType::float32, 1048576, 8);
  EXPECT_EQ(l.send_elements, 262144u);
  EXPECT_EQ(l.recv_elements, 32768u);
  // alltoall: count per peer; both buffers hold the total.
  l = layout_for(Op::alltoall, DType::float64, 1048576, 4);
  EXPECT_EQ(l.count, 32768u);
  EXPECT_EQ(l.send_elements, 131072u);
  EXPECT_EQ(l.recv_elements, 131072u);
  // Rounding down to whole elements per rank: 100 B of float on 3 ranks -> 8 per rank, S = 96.
  l = layout_for(Op::allgather, DType::float32, 100, 3);
  EXPECT_EQ(l.count, 8u);
  EXPECT_EQ(l.bytes, 96u);
  // Too small for one element per rank.
  EXPECT_EQ(layout_for(Op::alltoall, DType::float32, 8, 4).count, 0u);
}

}  // namespace
}  // namespace ccbench
