// The op, dtype and redop tables (core/types.cpp): the lists, names and aliases every command
// takes from them, against hand-written values.
#include <gtest/gtest.h>

#include <vector>

#include "core/bandwidth.hpp"
#include "core/types.hpp"

namespace ccbench {
namespace {

TEST(OpTable, FamiliesInTableOrder) {
  const std::vector<Op> collectives(all_collective_ops().begin(), all_collective_ops().end());
  EXPECT_EQ(collectives, (std::vector<Op>{Op::allreduce, Op::allgather, Op::alltoall, Op::reduce_scatter, Op::broadcast,
                                          Op::sendrecv, Op::gather, Op::scatter, Op::reduce, Op::alltoallv,
                                          Op::moe_dispatch, Op::moe_combine, Op::moe_pair}));
  const std::vector<Op> fabric(all_fabric_ops().begin(), all_fabric_ops().end());
  EXPECT_EQ(fabric,
            (std::vector<Op>{Op::fabric_pingpong, Op::fabric_bw, Op::fabric_bibw, Op::fabric_write, Op::fabric_read}));
  for (Op op : collectives) EXPECT_TRUE(info(op).is_collective()) << name(op);
  for (Op op : fabric) EXPECT_FALSE(info(op).is_collective()) << name(op);
  EXPECT_FALSE(info(Op::checkpoint_write).is_collective());
}

TEST(OpTable, NamesAndAliasesJoined) {
  EXPECT_EQ(op_names(all_collective_ops(), ","),
            "allreduce,allgather,alltoall,reduce_scatter,broadcast,sendrecv,gather,scatter,reduce,alltoallv,moe_dispatch,"
            "moe_combine,moe_pair");
  EXPECT_EQ(op_aliases(all_fabric_ops()), "pingpong, bw, bibw, write, read");
  EXPECT_EQ(op_aliases(all_collective_ops()), "bcast");  // the ops without an alias are left out
  EXPECT_EQ(dtype_names(" "), "int8 uint8 int32 int64 float double half bfloat16 fp8_e4m3 fp8_e5m2");
  EXPECT_EQ(redop_names(), "sum, prod, min, max, avg");
}

TEST(OpTable, ParseTakesNamesAliasesAndSpellings) {
  EXPECT_EQ(parse_op("bcast"), Op::broadcast);
  EXPECT_EQ(parse_op("reduce-scatter"), Op::reduce_scatter);
  EXPECT_EQ(parse_op("ReduceScatter"), Op::reduce_scatter);
  EXPECT_EQ(parse_op("bw"), Op::fabric_bw);
  EXPECT_EQ(parse_op("fabric_bibw"), Op::fabric_bibw);
  EXPECT_EQ(parse_op("checkpoint_commit"), Op::checkpoint_commit);
  EXPECT_EQ(parse_op("send_recv"), Op::sendrecv);
  EXPECT_EQ(parse_op("Reduce"), Op::reduce);
  EXPECT_EQ(parse_op("allscatter"), std::nullopt);
  EXPECT_EQ(parse_op(""), std::nullopt);  // an empty alias matches nothing
  EXPECT_EQ(parse_redop("avg"), RedOp::avg);
  EXPECT_EQ(parse_redop("xor"), std::nullopt);
  for (Op op : all_collective_ops()) EXPECT_EQ(parse_op(name(op)), op);
}

// The row's buffers and bus factor at 4 ranks of float, 4096 bytes, by hand: a total over ranks
// gives each rank 1024 bytes = 256 floats.
TEST(OpTable, RowDecidesLayoutAndBusFactor) {
  struct Expected {
    Op op;
    std::uint64_t count, send, recv;
    double factor;
  };
  for (const Expected& e :
       {Expected{Op::allreduce, 1024, 1024, 1024, 1.5},  // 2 x 3/4
        Expected{Op::allgather, 256, 256, 1024, 0.75}, Expected{Op::reduce_scatter, 256, 1024, 256, 0.75},
        Expected{Op::alltoall, 256, 1024, 1024, 0.75}, Expected{Op::broadcast, 1024, 1024, 1024, 1.0},
        // gather, scatter: S a total, 256 floats per rank; only the root fills (gather) or sends
        // (scatter) its n x count, but every rank holds the buffers (nccl-tests' sizes).
        Expected{Op::gather, 256, 256, 1024, 0.75}, Expected{Op::scatter, 256, 1024, 256, 0.75},
        Expected{Op::sendrecv, 1024, 1024, 1024, 1.0}, Expected{Op::reduce, 1024, 1024, 1024, 1.0},
        Expected{Op::fabric_bibw, 1024, 1024, 1024, 2.0}, Expected{Op::fabric_bw, 1024, 1024, 1024, 1.0},
        Expected{Op::checkpoint_write, 1024, 1024, 1024, 1.0}}) {
    const OpLayout l = layout_for(e.op, DType::float32, 4096, 4);
    EXPECT_EQ(l.count, e.count) << name(e.op);
    EXPECT_EQ(l.send_elements, e.send) << name(e.op);
    EXPECT_EQ(l.recv_elements, e.recv) << name(e.op);
    EXPECT_EQ(l.bytes, 4096u) << name(e.op);
    EXPECT_DOUBLE_EQ(bus_factor(e.op, 4), e.factor) << name(e.op);
  }
  // The granule: a whole float, or 16 bytes per rank x 4 ranks for a total over ranks.
  EXPECT_EQ(whole_size_granule_bytes(Op::allreduce, DType::float32, 4), 4u);
  EXPECT_EQ(whole_size_granule_bytes(Op::alltoall, DType::float32, 4), 64u);
  EXPECT_EQ(whole_size_granule_bytes(Op::gather, DType::float32, 4), 64u);
  EXPECT_EQ(whole_size_granule_bytes(Op::reduce, DType::float32, 4), 4u);
  // A matrix op takes no size: its counts come from its matrix (core/traffic_matrix.hpp); its bus
  // factor is an even matrix's off-rank share, alltoall's.
  for (Op op : {Op::alltoallv, Op::moe_dispatch, Op::moe_combine, Op::moe_pair}) {
    EXPECT_EQ(layout_for(op, DType::float32, 4096, 4).count, 0u) << name(op);
    EXPECT_DOUBLE_EQ(bus_factor(op, 4), 0.75) << name(op);
  }
  // 4 ranks each sending 1024 bytes of which 768 off-rank, in 1 us: 0.768 GB/s.
  EXPECT_DOUBLE_EQ(matrix_busbw_gbps(768.0, 1.0), 0.768);
}

// Which ops take --root and a redop: the plan sets CaseSpec::root for the rooted ones only.
TEST(OpTable, RootedOpsAndReductions) {
  for (Op op : all_collective_ops()) {
    const bool rooted = op == Op::broadcast || op == Op::gather || op == Op::scatter || op == Op::reduce;
    EXPECT_EQ(is_rooted(op), rooted) << name(op);
  }
  EXPECT_TRUE(info(Op::reduce).is_reduction);
  EXPECT_FALSE(info(Op::sendrecv).is_reduction);
  EXPECT_FALSE(info(Op::gather).is_reduction);
  EXPECT_FALSE(info(Op::scatter).is_reduction);
}

// busbw as nccl-tests defines it, by hand: S = 1 MiB in 1 ms is algbw 1048576 B / 1e-3 s = 1.048576
// GB/s for every op; gather and scatter on 4 ranks scale it by 3/4 (0.786432), sendrecv and reduce
// by 1; gather on 3 ranks of float: 1 MiB / 3 / 4 B = 87381.33 floats, rounded down to 87380 (a
// multiple of 4 floats), so S = 87380 x 3 x 4 = 1048560 bytes.
TEST(OpTable, NewOpsBandwidthByHand) {
  EXPECT_NEAR(algbw_gbps(1048576, 1000.0), 1.048576, 1e-12);
  EXPECT_NEAR(busbw_gbps(Op::gather, 4, 1048576, 1000.0), 0.786432, 1e-12);
  EXPECT_NEAR(busbw_gbps(Op::scatter, 4, 1048576, 1000.0), 0.786432, 1e-12);
  EXPECT_NEAR(busbw_gbps(Op::sendrecv, 4, 1048576, 1000.0), 1.048576, 1e-12);
  EXPECT_NEAR(busbw_gbps(Op::reduce, 4, 1048576, 1000.0), 1.048576, 1e-12);
  EXPECT_DOUBLE_EQ(bus_factor(Op::gather, 2), 0.5);
  const OpLayout gather3 = layout_for(Op::gather, DType::float32, 1048576, 3);
  EXPECT_EQ(gather3.count, 87380u);
  EXPECT_EQ(gather3.bytes, 1048560u);
  EXPECT_EQ(gather3.send_elements, 87380u);
  EXPECT_EQ(gather3.recv_elements, 262140u);
  const OpLayout scatter3 = layout_for(Op::scatter, DType::float32, 1048576, 3);
  EXPECT_EQ(scatter3.count, 87380u);
  EXPECT_EQ(scatter3.send_elements, 262140u);
  EXPECT_EQ(scatter3.recv_elements, 87380u);
  // sendrecv and reduce: S is each rank's message, count = S / 4.
  EXPECT_EQ(layout_for(Op::sendrecv, DType::float32, 1048576, 3).count, 262144u);
  EXPECT_EQ(layout_for(Op::reduce, DType::float32, 1048576, 3).count, 262144u);
}

}  // namespace
}  // namespace ccbench
