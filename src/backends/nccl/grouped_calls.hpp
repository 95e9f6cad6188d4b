// The ncclSend/ncclRecv of the ops NCCL runs as a group of point-to-point calls: sendrecv always,
// gather and scatter where the loaded NCCL has no ncclGather/ncclScatter (before 2.28), as
// nccl-tests' sendrecv.cu, gather.cu and scatter.cu post them. Pure and header-only: the backend
// walks it inside the timed op (no allocation), the unit tests collect it and check each peer.
#pragma once

#include <cstdint>

#include "core/enums.hpp"

namespace ccbench::nccl {

// One call of the group; each moves the case's `count` elements. The offset is in elements from
// the op's send base (the send buffer, or in place the input's place in the receive buffer) for a
// send, from its receive base (where the result lands) for a receive.
struct GroupedCall {
  bool send = false;
  int peer = 0;
  std::uint64_t offset_elements = 0;
  bool operator==(const GroupedCall&) const = default;
};

// Calls f(GroupedCall) for each call `rank` of `nranks` makes for `op` (sendrecv, gather, scatter;
// nothing for any other op). sendrecv: a send to rank+1 and a receive from rank-1. gather: every
// rank sends its block to the root; the root receives rank r's block at r x count. scatter: the root
// sends the block at r x count to rank r; every rank receives its block from the root. In place the
// root's own block is already where it belongs, so the root makes no call to itself.
template <typename F>
void for_each_grouped_call(Op op, int rank, int nranks, int root, bool in_place, std::uint64_t count, F&& f) {
  const bool is_root = rank == root;
  switch (op) {
    case Op::sendrecv:
      f(GroupedCall{true, (rank + 1) % nranks, 0});
      f(GroupedCall{false, (rank + nranks - 1) % nranks, 0});
      return;
    case Op::gather:
      if (is_root) {
        for (int peer = 0; peer < nranks; ++peer) {
          if (!(in_place && peer == root)) f(GroupedCall{false, peer, static_cast<std::uint64_t>(peer) * count});
        }
      }
      if (!(in_place && is_root)) f(GroupedCall{true, root, 0});
      return;
    case Op::scatter:
      if (is_root) {
        for (int peer = 0; peer < nranks; ++peer) {
          if (!(in_place && peer == root)) f(GroupedCall{true, peer, static_cast<std::uint64_t>(peer) * count});
        }
      }
      if (!(in_place && is_root)) f(GroupedCall{false, root, 0});
      return;
    default:
      return;
  }
}

}  // namespace ccbench::nccl
