// Host-side fill and check at memory speed: the pattern repeats every pattern::kPeriod elements
// (core/pattern.hpp), so one period is computed exactly with the pattern's own formulas and the
// rest of a buffer is copied from it (fill) or compared with it (check). Results are identical to
// evaluating the formula at every element; tests/unit/core pattern tests compare both.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/pattern.hpp"

namespace ccbench::pattern {

// dst[i] = T(value(i)) for i < n, where value(i + kPeriod) == value(i).
template <typename T, typename Value>
void fill_periodic(T* dst, std::uint64_t n, Value&& value) {
  const std::uint64_t period = std::min<std::uint64_t>(n, kPeriod);
  for (std::uint64_t j = 0; j < period; ++j) dst[j] = static_cast<T>(value(j));
  for (std::uint64_t done = period; done < n;) {  // done stays a multiple of the period
    const std::uint64_t m = std::min(done, n - done);
    std::memcpy(dst + done, dst, m * sizeof(T));
    done += m;
  }
}

// How many of out[0, n) differ from T(expected(i)). The buffer is blocks of `block` elements
// (0: one block) and, inside each block, expected(start + j) repeats with j every kPeriod elements
// (allreduce, reduce_scatter, broadcast: one block; allgather, alltoall, gather: one block per peer).
template <typename T, typename Expected>
std::uint64_t count_wrong_periodic(const T* out, std::uint64_t n, std::uint64_t block, Expected&& expected) {
  if (block == 0 || block > n) block = n;
  std::uint64_t wrong = 0;
  std::vector<T> table;
  for (std::uint64_t start = 0; start < n; start += block) {
    const std::uint64_t len = std::min(block, n - start);
    const std::uint64_t period = std::min<std::uint64_t>(len, kPeriod);
    table.resize(period);
    for (std::uint64_t j = 0; j < period; ++j) table[j] = static_cast<T>(expected(start + j));
    const T* o = out + start;
    for (std::uint64_t j0 = 0; j0 < len; j0 += period) {
      const std::uint64_t m = std::min(period, len - j0);
      std::uint64_t w = 0;
      for (std::uint64_t j = 0; j < m; ++j) w += o[j0 + j] != table[j] ? 1 : 0;
      wrong += w;
    }
  }
  return wrong;
}

// The block length for count_wrong_periodic of an op's output: one block per peer where the output
// is the peers' blocks side by side, else the whole output.
inline std::uint64_t output_block(Op op, std::uint64_t count) {
  return op == Op::allgather || op == Op::alltoall || op == Op::gather ? count : 0;
}

}  // namespace ccbench::pattern
