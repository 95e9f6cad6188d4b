// The enums alone, with no standard-library includes, so CUDA device code can use them.
#pragma once

#include <cstdint>

namespace ccbench {

enum class Op : std::uint8_t {
  allreduce,
  allgather,
  alltoall,
  reduce_scatter,
  broadcast,
  sendrecv,  // each rank sends to rank+1 and receives from rank-1 (nccl-tests' sendrecv)
  gather,
  scatter,
  reduce,
  // Per-peer counts from a traffic matrix (core/traffic_matrix.hpp): `run --matrix`, and `run --moe`'s
  // dispatch, its transpose (combine) and the two back to back (pair).
  alltoallv,
  moe_dispatch,
  moe_combine,
  moe_pair,
  // Point-to-point transport tests of `ccbench fabric` share the result model.
  fabric_pingpong,
  fabric_bw,
  fabric_bibw,
  fabric_write,
  fabric_read,
  // `ccbench checkpoint`: one trial's phases on a storage tier (bus factor 1).
  checkpoint_write,
  checkpoint_read,
  checkpoint_commit,
};
// The last Op: core/types.cpp's table must hold one row per op up to it, in order (static_assert).
inline constexpr Op kLastOp = Op::checkpoint_commit;

enum class DType : std::uint8_t {
  int8,
  uint8,
  int32,
  int64,
  float32,
  float64,
  float16,
  bfloat16,
  fp8_e4m3,
  fp8_e5m2,
};
inline constexpr DType kLastDType = DType::fp8_e5m2;

enum class RedOp : std::uint8_t { sum, prod, min, max, avg, none };
inline constexpr RedOp kLastRedOp = RedOp::none;

// What --backend names (backends/registry.cpp makes each one).
enum class BackendKind : std::uint8_t { mpi, nccl, libfabric };
inline constexpr BackendKind kLastBackendKind = BackendKind::libfabric;

// The NCCL backend's --path: which transports NCCL may use.
enum class NcclPath : std::uint8_t { nvlink, efa, all };
inline constexpr NcclPath kLastNcclPath = NcclPath::all;

}  // namespace ccbench
