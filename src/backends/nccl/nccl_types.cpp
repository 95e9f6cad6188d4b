#include "backends/nccl/nccl_types.hpp"

#include <cmath>
#include <cstdlib>

#include "core/deadlines.hpp"
#include "core/error.hpp"

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

ErrorClass classify_error(ncclResult_t result) {
  switch (result) {
    case ncclRemoteError:
      return {ErrorSide::peer, "a peer process exited or the network between the ranks failed"};
    case ncclSystemError:
      return {ErrorSide::local,
              "a system call failed on this rank (a socket, or /dev/shm for NCCL's shared-memory transport: a "
              "container's /dev/shm is often too small; enlarge it, e.g. docker run --shm-size=1g, or set "
              "NCCL_SHM_DISABLE=1)"};
    case ncclUnhandledCudaError:
      return {ErrorSide::local, "a CUDA call inside NCCL failed on this rank"};
    case ncclInternalError:
      return {ErrorSide::local, "NCCL failed internally on this rank (NCCL_DEBUG=WARN says where)"};
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      return {ErrorSide::local, "NCCL rejected the call's arguments on this rank (a ccbench defect: please report it)"};
    default:
      return {ErrorSide::local, "NCCL reported an error on this rank"};
  }
}

std::optional<std::string> avg_fixed_result(DType dtype, int nranks) {
  const DTypeInfo& t = info(dtype);
  if (!t.is_floating && t.size_bytes == 1 && nranks > t.exact_int_limit) {
    return "NCCL's avg of " + std::string(t.name) + " over " + std::to_string(nranks) +
           " ranks is 0 whatever the inputs (the sum is at most " + std::to_string(t.exact_int_limit) +
           "): nothing to check or to time; use int32 or a floating type";
  }
  if (dtype == DType::fp8_e4m3 && nranks >= 1024) {
    return "NCCL's avg of fp8_e4m3 over " + std::to_string(nranks) +
           " ranks is 0 whatever the inputs (it scales by 1/n rounded to e4m3, which is 0 from 1024 ranks): use "
           "fp8_e5m2, bfloat16 or sum";
  }
  return std::nullopt;
}

double init_timeout_s(const char* env_text, double setup_watchdog_s) {
  double wanted = kDefaultInitTimeoutS;
  if (env_text != nullptr && env_text[0] != '\0') {
    char* end = nullptr;
    wanted = std::strtod(env_text, &end);
    if (end == env_text || *end != '\0' || !std::isfinite(wanted) || wanted < 0) {
      throw UsageError(std::string("CCBENCH_NCCL_INIT_TIMEOUT: expected seconds (0 = no limit), got '") + env_text +
                       "'");
    }
  }
  return inside_setup_watchdog_s(wanted, setup_watchdog_s);
}

bool is_peer_failure(ncclResult_t result) { return classify_error(result).side == ErrorSide::peer; }

}  // namespace ccbench::nccl
