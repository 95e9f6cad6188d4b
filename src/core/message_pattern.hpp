// The payload of a replayed send (docs/replay.md, "Sends and receives"). MPI's non-overtaking
// order pairs the n-th send from rank a to rank b on a communicator with the n-th receive at b from
// a, so the data depends on (sender, receiver, n): a receive that gets another pair's message, or
// another message of its own pair, differs. Values are run's plain data (core/pattern.hpp:
// integers in [-4, 4], or [0, 8] unsigned), exact in every element type and periodic in the index
// (kPeriod), so core/pattern_check.hpp fills and checks them at memory speed.
#pragma once

#include <cstdint>

#include "core/pattern.hpp"

namespace ccbench::pattern {

// The message's pattern is run's plain data of `sender` under these parameters (the NCCL backend
// fills and checks it with its kernels for a non-reducing op, whose input is data_value).
CCBENCH_HD Params message_params(const Params& p, int receiver, std::uint64_t sequence) {
  Params message = p;
  message.seed = mix(p.seed, static_cast<std::uint32_t>(receiver), sequence);
  return message;
}

CCBENCH_HD std::int64_t message_value(const Params& p, int sender, int receiver, std::uint64_t sequence,
                                      std::uint64_t index) {
  return data_value(message_params(p, receiver, sequence), sender, index);
}

}  // namespace ccbench::pattern
