#include "backends/point_to_point.hpp"

#include <string>

#include "backends/backend.hpp"
#include "backends/host_types.hpp"
#include "core/message_pattern.hpp"
#include "core/pattern_check.hpp"
#include "core/types.hpp"

namespace ccbench {
namespace {

// A value the pattern never produces (it stays within [-4, 8]), so a receive that was not written
// is counted wrong.
constexpr std::int64_t kPoison = 101;

pattern::Params typed(const pattern::Params& p, DType dtype) {
  pattern::Params q = p;
  q.is_signed = info(dtype).is_signed;
  return q;
}

}  // namespace

void PointToPoint::fill_host(std::span<const PointToPointCall> batch, int self, const pattern::Params& p, void* send,
                             void* recv) {
  std::uint64_t send_offset = 0, recv_offset = 0;
  for (const PointToPointCall& call : batch) {
    const pattern::Params q = typed(p, call.dtype);
    const std::uint64_t bytes = call.count * info(call.dtype).size_bytes;
    with_host_type(call.dtype, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      if (call.send) {
        pattern::fill_periodic(
            reinterpret_cast<T*>(static_cast<char*>(send) + send_offset), call.count,
            [&](std::uint64_t i) { return pattern::message_value(q, self, call.peer, call.sequence, i); });
      } else {
        pattern::fill_periodic(reinterpret_cast<T*>(static_cast<char*>(recv) + recv_offset), call.count,
                               [](std::uint64_t) { return kPoison; });
      }
      return 0;
    });
    (call.send ? send_offset : recv_offset) += bytes;
  }
}

std::vector<std::uint64_t> PointToPoint::verify_host(std::span<const PointToPointCall> batch, int self,
                                                     const pattern::Params& p, const void* recv) {
  std::vector<std::uint64_t> wrong(batch.size(), 0);
  std::uint64_t recv_offset = 0;
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const PointToPointCall& call = batch[k];
    if (call.send) continue;
    const pattern::Params q = typed(p, call.dtype);
    wrong[k] = with_host_type(call.dtype, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      return pattern::count_wrong_periodic(
          reinterpret_cast<const T*>(static_cast<const char*>(recv) + recv_offset), call.count, 0,
          [&](std::uint64_t i) { return pattern::message_value(q, call.peer, self, call.sequence, i); });
    });
    recv_offset += call.count * info(call.dtype).size_bytes;
  }
  return wrong;
}

}  // namespace ccbench
