#pragma once

#include <cstdint>
#include <string>

#include "backends/backend.hpp"
#include "core/types.hpp"

namespace ccbench {

// Calls f with a typed null pointer for the dtype's host element type, so the host fill and verify
// loops are monomorphic. The types without a host arithmetic type (half, bfloat16, fp8) are checked
// on the device only; a host path reaching one is a bug upstream of it, not a user error.
template <typename F>
auto with_host_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::int8:
      return f(static_cast<std::int8_t*>(nullptr));
    case DType::uint8:
      return f(static_cast<std::uint8_t*>(nullptr));
    case DType::int32:
      return f(static_cast<std::int32_t*>(nullptr));
    case DType::int64:
      return f(static_cast<std::int64_t*>(nullptr));
    case DType::float32:
      return f(static_cast<float*>(nullptr));
    case DType::float64:
      return f(static_cast<double*>(nullptr));
    default:
      throw BackendError("no host element type for " + std::string(info(dtype).name));
  }
}

}  // namespace ccbench
