// Point-to-point calls of a traced job (`ccbench replay`, docs/replay.md): a backend that can run
// them implements this beside Backend, and replay finds it with dynamic_cast. No sweep measures
// sends and receives, so the Backend interface every backend implements does not carry them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/enums.hpp"
#include "core/pattern.hpp"

namespace ccbench {

struct PointToPointCall {
  bool send = true;  // false: a receive
  DType dtype = DType::float32;
  std::uint64_t count = 0;
  int peer = 0;  // the other rank's rank in the backend's communicator
  // The message's number among those from its sender to its receiver on the communicator, in
  // issue order: the n-th send from a to b pairs with the n-th receive at b from a, so both sides
  // number it alike and the payload (core/message_pattern.hpp) is known to the receiver.
  std::uint64_t sequence = 0;
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
  // The data check (--check), outside the timed batch. `self` is this rank in the communicator.
  // Fills each send's region with its message (core/message_pattern.hpp) and poisons each
  // receive's region, so a receive that lands nowhere is counted wrong.
  virtual void fill_point_to_point(std::span<const PointToPointCall> batch, int self, const pattern::Params& p) = 0;
  // The wrong elements of each call of the batch against the message its peer sent (a send: 0).
  virtual std::vector<std::uint64_t> verify_point_to_point(std::span<const PointToPointCall> batch, int self,
                                                           const pattern::Params& p) = 0;

  // The two on host memory laid out as time_point_to_point_us lays them out (each call its own
  // region, sends from `send`, receives into `recv`, in batch order): for backends whose buffers
  // are host memory. Element types of the MPI backend (int8, uint8, int32, int64, float, double).
  static void fill_host(std::span<const PointToPointCall> batch, int self, const pattern::Params& p, void* send,
                        void* recv);
  static std::vector<std::uint64_t> verify_host(std::span<const PointToPointCall> batch, int self,
                                                const pattern::Params& p, const void* recv);
};

}  // namespace ccbench
