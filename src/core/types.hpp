// Ops, element types and reduction operators: the vocabulary every other layer shares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/enums.hpp"

namespace ccbench {

// Which command measures an op.
enum class OpFamily : std::uint8_t {
  collective,  // `ccbench run` (and screen, congestion), on every backend that has its kernel
  fabric,      // `ccbench fabric`: point-to-point between 2 ranks over libfabric
  checkpoint,  // `ccbench checkpoint`: a phase of one trial on a storage tier
};

// How an op's size S maps onto each rank's buffers (core/bandwidth.hpp, layout_for).
enum class OpBuffers : std::uint8_t {
  whole,     // count = S / element size, sent and received whole (allreduce, broadcast, reduce, sendrecv, p2p)
  gather,    // S is a total over n ranks, `count` per rank: send count, receive n x count (allgather, gather)
  scatter,   // S is a total: send n x count, receive count (reduce_scatter, scatter)
  exchange,  // S is a total: send and receive n x count (alltoall)
  matrix,    // per-peer counts from a traffic matrix, no size sweep: the plan builds them (alltoallv)
};
// gather's n x count lands on the root only and scatter reads the root's only, but every rank holds
// the same buffers (as nccl-tests allocates them), so the plan's memory check holds whatever --root.

// busbw = algbw x factor over n ranks, as nccl-tests defines it (core/bandwidth.hpp, bus_factor).
enum class BusFactor : std::uint8_t {
  one,              // broadcast, reduce, sendrecv, point-to-point, checkpoint phases
  allreduce_ring,   // 2(n-1)/n
  ring,             // (n-1)/n: allgather, reduce_scatter, alltoall, gather, scatter
  both_directions,  // 2: both directions carry S at once, busbw the aggregate
  off_rank,         // the matrix's off-rank share of its bytes ((n-1)/n for an even matrix, as alltoall)
};

// The ops whose result depends on --root: the plan sets CaseSpec::root for them only.
constexpr bool is_rooted(Op op) {
  return op == Op::broadcast || op == Op::gather || op == Op::scatter || op == Op::reduce;
}

// Everything ccbench decides by op, in one row per op (core/types.cpp, kOps); adding an op is its
// row plus its kernel in each backend that runs it (docs/architecture.md, "How to add an op").
struct OpInfo {
  Op op;
  std::string_view name;
  std::string_view alias;  // a short name --ops also takes ("bcast", "bw"), or ""
  OpFamily family;
  bool is_reduction;  // takes a redop
  OpBuffers buffers;
  BusFactor bus;

  constexpr bool is_collective() const { return family == OpFamily::collective; }
};

struct DTypeInfo {
  DType dtype;
  std::string_view name;  // nccl-tests spelling: "float", "double", "half", ...
  std::size_t size_bytes;
  bool is_signed;
  bool is_floating;
  // Largest integer N such that every integer in [-N, N] is exactly representable.
  std::int64_t exact_int_limit;
};

const OpInfo& info(Op op);
const DTypeInfo& info(DType dtype);
std::string_view name(Op op);
std::string_view name(DType dtype);
std::string_view name(RedOp redop);

std::span<const Op> all_collective_ops();  // kOps' collective rows, in order
std::span<const Op> all_fabric_ops();      // kOps' fabric rows, in order
// The names joined: "allreduce, allgather, ..." (help texts and the errors that list what is valid).
std::string op_names(std::span<const Op> ops, std::string_view separator = ", ");
std::string op_aliases(std::span<const Op> ops, std::string_view separator = ", ");
std::span<const DType> all_dtypes();
std::span<const RedOp> all_redops();  // without `none`
std::string dtype_names(std::string_view separator = ", ");
std::string redop_names(std::string_view separator = ", ");  // without `none`

std::string_view name(BackendKind backend);
std::string_view name(NcclPath path);
std::span<const BackendKind> all_backends();

// --backend TEXT: the backend, else UsageError "--backend: unknown backend 'TEXT' (known: mpi, nccl,
// libfabric)". One check, so `ccbench screen` refuses before any test what `ccbench run` refuses.
BackendKind backend_flag(std::string_view text);
// --path TEXT: UsageError "--path: expected nvlink, efa or all, got 'TEXT'".
NcclPath nccl_path_flag(std::string_view text);

// Parsers accept the canonical names and common aliases (fp32, f32, bf16, ...).
std::optional<Op> parse_op(std::string_view text);
std::optional<DType> parse_dtype(std::string_view text);
std::optional<RedOp> parse_redop(std::string_view text);

// Comma-separated op list; throws UsageError naming the bad element.
std::vector<Op> parse_op_list(std::string_view text);

}  // namespace ccbench
