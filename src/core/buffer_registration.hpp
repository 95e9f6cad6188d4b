// run -R/--register: how the NCCL backend hands its send and receive buffers to NCCL, as nccl-tests'
// -R (docs/nccl-backend.md, "Buffer registration"). One owner of the values, their names in the
// result file and the flag's parse.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace ccbench {

enum class BufferRegistration : std::uint8_t {
  none,              // -R 0: plain cudaMalloc buffers (NCCL copies through its own)
  comm_register,     // -R 1: ncclCommRegister of each buffer, once per communicator and size
  symmetric_window,  // -R 2: ncclMemAlloc buffers in NCCL_WIN_COLL_SYMMETRIC windows (NCCL 2.27+)
};

// The name config.registration records (and compare's must-match key `registration` reads).
inline std::string_view name(BufferRegistration mode) {
  switch (mode) {
    case BufferRegistration::comm_register:
      return "comm_register";
    case BufferRegistration::symmetric_window:
      return "symmetric_window";
    default:
      return "none";
  }
}

// -R TEXT: 0, 1 or 2, else UsageError naming the flag.
inline BufferRegistration buffer_registration_flag(std::string_view text) {
  if (text == "0") return BufferRegistration::none;
  if (text == "1") return BufferRegistration::comm_register;
  if (text == "2") return BufferRegistration::symmetric_window;
  throw UsageError("-R/--register: expected 0 (none), 1 (ncclCommRegister) or 2 (symmetric windows), got '" +
                   std::string(text) + "'");
}

}  // namespace ccbench
