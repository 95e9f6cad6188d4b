// Bus-bandwidth factors and layouts against values computed by hand from nccl-tests' conventions.
#include "core/bandwidth.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ccbench {
namespace {

TEST(BusFactor, HandComputed) {
  EXPECT_DOUBLE_EQ(bus_factor(Op::allreduce, 2), 1.0);   // 2*(2-1)/2
  EXPECT_DOUBLE_EQ(bus_factor(Op::allreduce, 4), 1.5);   // 2*3/4
  EXPECT_DOUBLE_EQ(bus_factor(Op::allreduce, 8), 1.75);  // 2*7/8
  EXPECT_DOUBLE_EQ(bus_factor(Op::allgather, 4), 0.75);  // 3/4
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

// nccl-tests' per-rank count (all_gather.cu, reduce_scatter.cu, alltoall.cu), written out here as
// nccl-tests writes it: count = bytes / eltSize, then (count/nranks) & ~(16/eltSize - 1).
std::uint64_t nccl_tests_base(std::uint64_t bytes, std::uint64_t elt, std::uint64_t nranks) {
  const std::uint64_t count = bytes / elt;
  return (count / nranks) & ~(16 / elt - 1);
}

TEST(Layout, PerRankCountsRoundedLikeNcclTests) {
  // By hand: 1 MiB of float over 24 ranks is 262144 elements, 10922 per rank, rounded down to a
  // multiple of 4 (16 bytes): 10920, so S = 10920 * 24 * 4 = 1048320 B, not 1048512.
  auto l = layout_for(Op::allgather, DType::float32, 1048576, 24);
  EXPECT_EQ(l.count, 10920u);
  EXPECT_EQ(l.bytes, 1048320u);
  // uint8 over 3 ranks: 1000 B -> 333 per rank -> 320 (a multiple of 16).
  l = layout_for(Op::reduce_scatter, DType::uint8, 1000, 3);
  EXPECT_EQ(l.count, 320u);
  EXPECT_EQ(l.bytes, 960u);
  // double over 48 ranks: 1 MiB -> 131072 / 48 = 2730 -> 2730 (already even).
  EXPECT_EQ(layout_for(Op::alltoall, DType::float64, 1048576, 48).count, 2730u);
  // bfloat16 over 256 ranks: 64 KiB -> 32768 / 256 = 128 (a multiple of 8).
  EXPECT_EQ(layout_for(Op::allgather, DType::bfloat16, 65536, 256).count, 128u);
  // Below one 16-byte block per rank: no case.
  EXPECT_EQ(layout_for(Op::allgather, DType::int8, 15 * 8, 8).count, 0u);

  std::vector<std::uint64_t> sizes;
  for (std::uint64_t b = 1; b <= (1ull << 30); b *= 2) sizes.push_back(b);
  for (std::uint64_t b : {1000ull, 999999ull, 3ull * 1048576 + 5, 123456789ull}) sizes.push_back(b);
  for (const int n : {2, 3, 8, 24, 48, 256}) {
    for (const DType d : all_dtypes()) {
      const std::uint64_t elt = info(d).size_bytes;
      for (const std::uint64_t bytes : sizes) {
        const std::uint64_t base = nccl_tests_base(bytes, elt, static_cast<std::uint64_t>(n));
        const auto un = static_cast<std::uint64_t>(n);
        for (const Op op : {Op::allgather, Op::reduce_scatter, Op::alltoall}) {
          const OpLayout got = layout_for(op, d, bytes, n);
          const std::string where = std::string(name(op)) + " " + std::string(name(d)) + " " + std::to_string(bytes) +
                                    " B on " + std::to_string(n) + " ranks";
          ASSERT_EQ(got.count, base) << where;
          ASSERT_EQ(got.bytes, base * un * elt) << where;  // nccl-tests' max(sendBytes, expectedBytes)
          ASSERT_EQ(got.send_elements, op == Op::allgather ? base : base * un) << where;
          ASSERT_EQ(got.recv_elements, op == Op::reduce_scatter ? base : base * un) << where;
          // Every rank's block (the in-place offsets rank * count) starts 16-byte aligned.
          ASSERT_EQ(got.count * elt % 16, 0u) << where;
        }
        // The ops whose count is the whole buffer are not divided or rounded (all_reduce.cu, broadcast.cu).
        ASSERT_EQ(layout_for(Op::allreduce, d, bytes, n).count, bytes / elt);
        ASSERT_EQ(layout_for(Op::broadcast, d, bytes, n).count, bytes / elt);
      }
    }
  }
}

TEST(Layout, WholeSizeGranuleIsTheSmallestSizeCarriedWhole) {
  // By hand: allgather of float over 2 ranks needs 16 B a rank, so 32 B; over 3 ranks, 48 B;
  // allreduce needs a whole element; double alltoall over 4 ranks, 64 B; complex-free 8-byte types
  // are below 16 B, so 16 B a rank still.
  EXPECT_EQ(whole_size_granule_bytes(Op::allgather, DType::float32, 2), 32u);
  EXPECT_EQ(whole_size_granule_bytes(Op::reduce_scatter, DType::float32, 3), 48u);
  EXPECT_EQ(whole_size_granule_bytes(Op::allreduce, DType::float32, 8), 4u);
  EXPECT_EQ(whole_size_granule_bytes(Op::alltoall, DType::float64, 4), 64u);
  // Against layout_for itself: the granule and its multiples are carried whole, and no smaller
  // positive size is.
  for (const int n : {1, 2, 3, 4, 8}) {
    for (const DType d : all_dtypes()) {
      for (const Op op : {Op::allreduce, Op::broadcast, Op::allgather, Op::reduce_scatter, Op::alltoall}) {
        const std::uint64_t g = whole_size_granule_bytes(op, d, n);
        const std::string where = std::string(name(op)) + " " + std::string(name(d)) + " on " + std::to_string(n);
        for (std::uint64_t k = 1; k <= 5; ++k) {
          const OpLayout l = layout_for(op, d, k * g, n);
          ASSERT_TRUE(l.count > 0 && l.bytes == k * g) << where << " at " << k * g;
        }
        for (std::uint64_t b = 1; b < g; ++b) {
          const OpLayout l = layout_for(op, d, b, n);
          ASSERT_FALSE(l.count > 0 && l.bytes == b) << where << " at " << b;
        }
      }
    }
  }
}

}  // namespace
}  // namespace ccbench
