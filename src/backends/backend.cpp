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

proof::ProofResult Backend::prove_path(const proof::RequiredPath& required, int /*rails*/, bool /*final_window*/) {
  throw BackendError(std::string(name()) + " has no evidence of its own for --require-path " +
                     proof::to_string(required));
}

std::optional<std::string> matrix_unsupported(const CaseSpec& c, std::uint64_t max_count) {
  const std::string op(name(c.op));
  if (!c.matrix) return op + " needs its per-peer counts: ccbench run --matrix FILE.csv or --moe SPEC";
  if (c.in_place) return op + " runs out of place only (its send and receive counts differ)";
  // The most loaded rank's buffer, the same answer on every rank (a plan that differed would hang):
  // the load's largest sent or received bytes (moe_pair: a rank's receive buffer holds both).
  const std::uint64_t largest = c.matrix->load.most_loaded_bytes / info(c.dtype).size_bytes;
  if (largest > max_count) {
    return op + ": " + std::to_string(largest) + " elements on the most loaded rank exceed the backend's largest " +
           "count (" + std::to_string(max_count) + ")";
  }
  return std::nullopt;
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
