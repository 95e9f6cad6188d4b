#include "backends/backend.hpp"

#include <algorithm>

namespace ccbench {

std::uint64_t Backend::send_bytes_needed(const CaseSpec& c) const {
  if (c.in_place) return 0;
  return c.layout.send_elements * info(c.dtype).size_bytes;
}

std::uint64_t Backend::recv_bytes_needed(const CaseSpec& c) const {
  const std::uint64_t elements =
      c.in_place ? std::max(c.layout.send_elements, c.layout.recv_elements) : c.layout.recv_elements;
  return elements * info(c.dtype).size_bytes;
}

}  // namespace ccbench
