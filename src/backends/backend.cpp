#include "backends/backend.hpp"

#include <algorithm>

#include "backends/point_to_point.hpp"

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

std::uint64_t PointToPoint::send_bytes(std::span<const PointToPointCall> batch) {
  std::uint64_t bytes = 0;
  for (const PointToPointCall& call : batch) bytes += call.send ? call.count * info(call.dtype).size_bytes : 0;
  return bytes;
}

std::uint64_t PointToPoint::recv_bytes(std::span<const PointToPointCall> batch) {
  std::uint64_t bytes = 0;
  for (const PointToPointCall& call : batch) bytes += call.send ? 0 : call.count * info(call.dtype).size_bytes;
  return bytes;
}

}  // namespace ccbench
