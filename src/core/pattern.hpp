// The seeded input pattern and the exact expected output of every op, dtype and redop.
//
// Compiled for both host and device (the NCCL backend's kernels include it), so the host unit tests
// check the same formulas the GPU uses. Values are small integers chosen so that every reduction is
// exact in the narrowest type (fp8 e5m2 holds integers up to 8 exactly): sums draw summands from
// [0, s] with s * nranks <= the type's exact-integer limit, products multiply at most one 2, and
// avg sums to a multiple of nranks. The check stays informative at every rank count (up to 4096 and
// beyond): where n ranks leave no room for a spread of values (sum beyond the limit, prod, min,
// max, avg) one rank per element, its owner, contributes the element's only non-neutral value, so
// a block that lands at another rank's place differs. See docs/method.md, "Correctness check".
#pragma once

#include <cstdint>

#include "core/enums.hpp"

#if defined(__CUDACC__)
#define CCBENCH_HD __host__ __device__ __forceinline__
#else
#define CCBENCH_HD inline
#endif

namespace ccbench::pattern {

struct Params {
  int nranks = 1;
  std::uint32_t seed = 0;
  std::int64_t exact_limit = 127;  // DTypeInfo::exact_int_limit of the element type
  bool is_signed = true;
  RedOp redop = RedOp::sum;
  int root = 0;
  bool is_floating = false;  // DTypeInfo::is_floating: avg over many ranks differs (avg_scaled)
};

// The pattern repeats every kPeriod elements, so a host check compares against a table of one period
// at memory speed instead of hashing every element (and every rank's input, for reductions): see
// core/pattern_check.hpp. kPeriod is prime: no power-of-two count is a multiple of it, so a block
// that lands at another rank's offset (rank x count) still differs; only a displacement by a
// multiple of kPeriod elements inside one block would go unseen.
inline constexpr std::uint64_t kPeriod = 65521;

// A cheap 32-bit mix: one multiply-xorshift round is enough to make neighbouring elements and
// ranks differ, which is what catches misplaced blocks; statistical quality is not needed.
CCBENCH_HD std::uint32_t mix(std::uint32_t seed, std::uint32_t rank, std::uint64_t index) {
  std::uint32_t h = static_cast<std::uint32_t>(index) * 0x9E3779B1u ^ static_cast<std::uint32_t>(index >> 32);
  h ^= rank * 0x85EBCA77u + seed * 0xC2B2AE3Du;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return h;
}

// A value in [0, n) from 32 random bits by multiply-shift (Lemire), not a division: fill and check
// run once per element, and a 32-bit division per element dominated them.
CCBENCH_HD std::uint32_t below(std::uint32_t h, std::uint32_t n) {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(h) * n) >> 32);
}

// The rank that owns `index` for prod and avg (it contributes the only non-neutral value).
CCBENCH_HD int owner_rank(const Params& p, std::uint64_t index) {
  index %= kPeriod;
  return static_cast<int>(below(mix(p.seed, 0xFFFFu, index), static_cast<std::uint32_t>(p.nranks)));
}

// Plain data for ops without a reduction (and for min/max): integers in [-4, 4], or [0, 8] unsigned.
CCBENCH_HD std::int64_t data_value(const Params& p, int rank, std::uint64_t index) {
  index %= kPeriod;
  const std::int64_t v = below(mix(p.seed, static_cast<std::uint32_t>(rank), index), 9u);
  return p.is_signed ? v - 4 : v;
}

CCBENCH_HD std::int64_t sum_span(const Params& p) {
  const std::int64_t s = p.exact_limit / (p.nranks > 0 ? p.nranks : 1);
  return s > 3 ? 3 : s;
}

// avg of a floating type over more ranks than its exact-integer limit (n > 16 for fp8 e4m3, n > 8
// for e5m2, n > 256 for bfloat16, n > 2048 for half): n*k no longer fits, so the owner gives k*2^j
// (2^j the largest power of two within half the limit, so k <= 2 stays within it) and NCCL's result is that times its
// scale, 1/n rounded to the type (a power of two times a value of the type: exact). expected_value then returns the
// owner's k*2^j, which the check multiplies by the type's rounded 1/n.
CCBENCH_HD bool avg_scaled(const Params& p) {
  return p.redop == RedOp::avg && p.is_floating && p.nranks > p.exact_limit;
}

CCBENCH_HD std::int64_t largest_power_of_two_within(std::int64_t limit) {
  std::int64_t v = 1;
  while (v <= limit / 2) v *= 2;
  return v;
}

// Input of `rank` at logical position `index` for a reduction with p.redop.
CCBENCH_HD std::int64_t reduce_input(const Params& p, int rank, std::uint64_t index) {
  index %= kPeriod;
  const std::uint32_t h = mix(p.seed, static_cast<std::uint32_t>(rank), index);
  const bool owner = rank == owner_rank(p, index);
  switch (p.redop) {
    case RedOp::sum: {
      const std::int64_t s = sum_span(p);
      if (s >= 1) return static_cast<std::int64_t>(below(h, static_cast<std::uint32_t>(s + 1)));
      return owner ? static_cast<std::int64_t>(h >> 31) : 0;
    }
    case RedOp::prod: {
      const bool two = owner && (mix(p.seed, 0xFFFEu, index) >> 31) != 0;
      return two ? 2 : 1;
    }
    // min and max: the owner's data value, the others the neutral end of the range ([-4, 4], or
    // [0, 8] unsigned). Drawing every rank from the range would make min -4 and max 4 almost
    // everywhere at a few dozen ranks: a check that no misplaced block can fail.
    case RedOp::min:
      if (owner) return data_value(p, rank, index);
      return p.is_signed ? 4 : 8;
    case RedOp::max:
      if (owner) return data_value(p, rank, index);
      return p.is_signed ? -4 : 0;
    case RedOp::avg: {
      if (!owner) return 0;
      if (avg_scaled(p)) {
        return largest_power_of_two_within(p.exact_limit / 2) * static_cast<std::int64_t>(below(h, 3u));
      }
      std::int64_t k = p.exact_limit / (p.nranks > 0 ? p.nranks : 1);
      k = k > 2 ? 2 : k;
      return static_cast<std::int64_t>(p.nranks) * static_cast<std::int64_t>(below(h, static_cast<std::uint32_t>(k + 1)));
    }
    default: return data_value(p, rank, index);
  }
}

// The reduction over all ranks of reduce_input at `index` (for avg_scaled, the owner's input: the
// check applies the type's rounded 1/n).
CCBENCH_HD std::int64_t reduced_value(const Params& p, std::uint64_t index) {
  std::int64_t acc = reduce_input(p, 0, index);
  for (int r = 1; r < p.nranks; ++r) {
    const std::int64_t v = reduce_input(p, r, index);
    switch (p.redop) {
      case RedOp::prod: acc *= v; break;
      case RedOp::min: acc = v < acc ? v : acc; break;
      case RedOp::max: acc = v > acc ? v : acc; break;
      default: acc += v; break;  // sum, avg
    }
  }
  if (p.redop == RedOp::avg && !avg_scaled(p)) acc /= p.nranks;
  return acc;
}

// The table's is_reduction for device code, which cannot read core/types.cpp's table (a
// static_assert there keeps the two equal).
CCBENCH_HD constexpr bool is_reduction(Op op) {
  return op == Op::allreduce || op == Op::reduce_scatter || op == Op::reduce;
}

// What `rank` puts at logical position `index` of its send data (count elements per block as in
// OpLayout: allreduce/broadcast/sendrecv/reduce `count`, allgather/gather `count`, reduce_scatter,
// alltoall and the root's scatter n*count).
CCBENCH_HD std::int64_t input_value(Op op, const Params& p, int rank, std::uint64_t index) {
  return is_reduction(op) ? reduce_input(p, rank, index) : data_value(p, rank, index);
}

// What `rank` must hold at logical position `index` of its result after the op (gather and
// reduce: on the root, the only rank with a result).
CCBENCH_HD std::int64_t expected_value(Op op, const Params& p, int rank, std::uint64_t index, std::uint64_t count) {
  switch (op) {
    case Op::allreduce:
    case Op::reduce: return reduced_value(p, index);
    case Op::reduce_scatter: return reduced_value(p, static_cast<std::uint64_t>(rank) * count + index);
    case Op::allgather: return data_value(p, static_cast<int>(index / count), index % count);
    case Op::alltoall:
      return data_value(p, static_cast<int>(index / count), static_cast<std::uint64_t>(rank) * count + index % count);
    case Op::broadcast: return data_value(p, p.root, index);
    case Op::sendrecv: return data_value(p, (rank + p.nranks - 1) % p.nranks, index);  // from rank-1
    case Op::gather: return data_value(p, static_cast<int>(index / count), index % count);
    case Op::scatter: return data_value(p, p.root, static_cast<std::uint64_t>(rank) * count + index);
    // Matrix ops: `rank` is the sender of the block, `index` its place in the sender's send buffer
    // (core/alltoallv_check.hpp; the NCCL verify kernel is called once per peer block).
    case Op::alltoallv:
    case Op::moe_dispatch:
    case Op::moe_combine:
    case Op::moe_pair: return data_value(p, rank, index);
    default: return data_value(p, rank, index);  // point-to-point: the peer's payload pattern
  }
}

}  // namespace ccbench::pattern
