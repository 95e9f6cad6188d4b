// Point-to-point calls of a traced job (`ccbench replay`, docs/replay.md): a backend that can run
// them implements this beside Backend, and replay finds it with dynamic_cast. No sweep measures
// sends and receives, so the Backend interface every backend implements does not carry them.
#pragma once

#include <cstdint>
#include <span>

#include "core/enums.hpp"

namespace ccbench {

struct PointToPointCall {
  bool send = true;  // false: a receive
  DType dtype = DType::float32;
  std::uint64_t count = 0;
  int peer = 0;  // the other rank's rank in the backend's communicator
};

class PointToPoint {
 public:
  virtual ~PointToPoint() = default;
  // Bytes of send and receive buffer a batch needs (each call has its own region, so receives never
  // overlap while they are all posted).
  static std::uint64_t send_bytes(std::span<const PointToPointCall> batch);
  static std::uint64_t recv_bytes(std::span<const PointToPointCall> batch);
  // Posts every call of the batch without blocking, in order, then waits for all of them; returns
  // the elapsed microseconds. Sends and receives a traced rank issues back to back are one batch,
  // so a pair both ranks post send-first cannot deadlock. Buffers: Backend::allocate, at least
  // send_bytes / recv_bytes of the batch.
  virtual double time_point_to_point_us(std::span<const PointToPointCall> batch) = 0;
};

}  // namespace ccbench
