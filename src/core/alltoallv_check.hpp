// The data check of a matrix op (alltoallv, moe_*) on host memory: the block this rank received
// from each peer is that peer's pattern at the block's place in the peer's send buffer; moe_pair's
// combine brings every rank's own send data back (docs/method.md, "alltoallv and MoE").
#pragma once

#include <cstdint>

#include "core/pattern.hpp"
#include "core/traffic_matrix.hpp"

namespace ccbench::pattern {

// Output elements of `out` (the receive buffer: the op's output, then moe_pair's combine output)
// that differ from what `rank` must hold.
template <typename T>
std::uint64_t count_wrong_alltoallv(const T* out, const MatrixCase& mc, const Params& p, int rank) {
  std::uint64_t wrong = 0;
  const AlltoallvCounts& c = mc.counts;
  for (std::size_t peer = 0; peer < c.recv_counts.size(); ++peer) {
    const T* block = out + c.recv_displs[peer];
    for (std::uint64_t j = 0; j < c.recv_counts[peer]; ++j) {
      wrong += block[j] != static_cast<T>(data_value(p, static_cast<int>(peer), c.source_offsets[peer] + j)) ? 1 : 0;
    }
  }
  const T* back = out + c.recv_elements;  // moe_pair: the combine's output is this rank's own input
  for (std::uint64_t j = 0; j < mc.combine.recv_elements; ++j) {
    wrong += back[j] != static_cast<T>(data_value(p, rank, j)) ? 1 : 0;
  }
  return wrong;
}

}  // namespace ccbench::pattern
