#include "backends/nccl/nccl_types.hpp"

namespace ccbench::nccl {

std::string version_string(int code) {
  // Since 2.9 the code is major*10000 + minor*100 + patch; before, major*1000 + minor*100 + patch.
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? (code % 10000) / 100 : (code % 1000) / 100;
  const int patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<ncclDataType_t> data_type(DType dtype) {
  switch (dtype) {
    case DType::int8:
      return ncclInt8;
    case DType::uint8:
      return ncclUint8;
    case DType::int32:
      return ncclInt32;
    case DType::int64:
      return ncclInt64;
    case DType::float32:
      return ncclFloat32;
    case DType::float64:
      return ncclFloat64;
    case DType::float16:
      return ncclFloat16;
    case DType::bfloat16:
      return ncclBfloat16;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    case DType::fp8_e4m3:
      return ncclFloat8e4m3;
    case DType::fp8_e5m2:
      return ncclFloat8e5m2;
#endif
    default:
      return std::nullopt;
  }
}

std::optional<ncclRedOp_t> red_op(RedOp redop) {
  switch (redop) {
    case RedOp::sum:
      return ncclSum;
    case RedOp::prod:
      return ncclProd;
    case RedOp::min:
      return ncclMin;
    case RedOp::max:
      return ncclMax;
    case RedOp::avg:
      return ncclAvg;
    default:
      return std::nullopt;
  }
}

int min_version_for(DType dtype) {
  switch (dtype) {
    case DType::bfloat16:
      return NCCL_VERSION(2, 10, 0);
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
      return NCCL_VERSION(2, 24, 0);
    default:
      return 0;
  }
}

bool is_peer_failure(ncclResult_t result) { return result == ncclRemoteError || result == ncclSystemError; }

}  // namespace ccbench::nccl
