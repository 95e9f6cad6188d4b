// How a nominal size maps to element counts and buffers per op, and the bus-bandwidth factors.
// Conventions follow nccl-tests (see docs/method.md): `bytes` is the total S of the collective.
#pragma once

#include <cstdint>

#include "core/types.hpp"

namespace ccbench {

struct OpLayout {
  std::uint64_t count = 0;          // the count argument of the collective (per rank or per peer)
  std::uint64_t bytes = 0;          // S after rounding the count down to whole elements
  std::uint64_t send_elements = 0;  // elements in each rank's send buffer
  std::uint64_t recv_elements = 0;  // elements in each rank's receive buffer
};

// nccl-tests' per-rank count for the ops whose S is a total over ranks (allgather, reduce_scatter,
// alltoall, gather, scatter; all_gather.cu, reduce_scatter.cu, alltoall.cu, gather.cu, scatter.cu): (count / nranks) &
// ~(16/eltSize - 1), rounded down to a whole 16 bytes, so every rank's block (and each in-place offset) is 16-byte
// aligned and counts, bytes and busbw match nccl-tests at every rank count (24, 48, ...).
std::uint64_t per_rank_count(std::uint64_t total_count, std::uint64_t element_bytes, int nranks);

// nccl-tests' rounding: the count is bytes / element size (per rank, as per_rank_count, for the ops
// whose S is a total over ranks). A zero count means the size is too small for this op and rank count.
OpLayout layout_for(Op op, DType dtype, std::uint64_t nominal_bytes, int nranks);

// The smallest size layout_for carries whole (bytes == nominal_bytes, count > 0): a whole element,
// or for the ops whose size is a total over ranks a whole 16 bytes per rank (element size if larger)
// times the rank count. Every size that is a multiple of it is carried whole.
std::uint64_t whole_size_granule_bytes(Op op, DType dtype, int nranks);

// busbw = algbw * factor: allreduce 2(n-1)/n; allgather, reduce_scatter, alltoall, gather, scatter
// (n-1)/n; broadcast, reduce, sendrecv and point-to-point 1, except fabric_bibw 2 (busbw counts
// both directions).
double bus_factor(Op op, int nranks);

// algbw in GB/s (1e9 B/s) from S bytes and a time in microseconds; 0 for a non-positive time.
double algbw_gbps(std::uint64_t bytes, double time_us);
double busbw_gbps(Op op, int nranks, std::uint64_t bytes, double time_us);
// A matrix op's (alltoallv, moe_*) busbw: the bytes a rank sends off-rank, on average over the
// ranks, per time (the diagonal, a rank's copy to itself, crosses no link). For an even matrix it
// equals alltoall's busbw at the same S.
double matrix_busbw_gbps(double mean_off_rank_send_bytes, double time_us);

}  // namespace ccbench
