#include "backends/nccl/nccl_types.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/types.hpp"

namespace ccbench::nccl {
namespace {

TEST(NcclTypes, EveryDtypeMapsToItsNcclType) {
  EXPECT_EQ(data_type(DType::int8), ncclInt8);
  EXPECT_EQ(data_type(DType::uint8), ncclUint8);
  EXPECT_EQ(data_type(DType::int32), ncclInt32);
  EXPECT_EQ(data_type(DType::int64), ncclInt64);
  EXPECT_EQ(data_type(DType::float32), ncclFloat32);
  EXPECT_EQ(data_type(DType::float64), ncclFloat64);
  EXPECT_EQ(data_type(DType::float16), ncclFloat16);
  EXPECT_EQ(data_type(DType::bfloat16), ncclBfloat16);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
  EXPECT_EQ(data_type(DType::fp8_e4m3), ncclFloat8e4m3);
  EXPECT_EQ(data_type(DType::fp8_e5m2), ncclFloat8e5m2);
#else
  EXPECT_FALSE(data_type(DType::fp8_e4m3));
#endif
}

TEST(NcclTypes, ElementSizesAgree) {
  // NCCL's element size per type, as nccl-tests' wordSize: 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1.
  for (DType d : all_dtypes()) {
    const auto t = data_type(d);
    if (!t) continue;
    std::size_t size = 0;
    switch (*t) {
      case ncclInt8:
      case ncclUint8:
        size = 1;
        break;
      case ncclInt32:
      case ncclUint32:
      case ncclFloat32:
        size = 4;
        break;
      case ncclInt64:
      case ncclUint64:
      case ncclFloat64:
        size = 8;
        break;
      case ncclFloat16:
      case ncclBfloat16:
        size = 2;
        break;
      default:
        size = 1;
        break;  // fp8
    }
    EXPECT_EQ(size, info(d).size_bytes) << name(d);
  }
}

TEST(NcclTypes, EveryRedopMapsAndNoneDoesNot) {
  EXPECT_EQ(red_op(RedOp::sum), ncclSum);
  EXPECT_EQ(red_op(RedOp::prod), ncclProd);
  EXPECT_EQ(red_op(RedOp::min), ncclMin);
  EXPECT_EQ(red_op(RedOp::max), ncclMax);
  EXPECT_EQ(red_op(RedOp::avg), ncclAvg);
  EXPECT_FALSE(red_op(RedOp::none));
}

TEST(NcclTypes, VersionStrings) {
  EXPECT_EQ(version_string(22809), "2.28.9");
  EXPECT_EQ(version_string(21903), "2.19.3");
  EXPECT_EQ(version_string(2708), "2.7.8");  // the pre-2.9 encoding
  EXPECT_EQ(version_string(NCCL_VERSION(2, 24, 3)), "2.24.3");
  EXPECT_EQ(min_version_for(DType::fp8_e5m2), NCCL_VERSION(2, 24, 0));
  EXPECT_EQ(min_version_for(DType::float32), 0);
}

TEST(NcclTypes, LibraryVersionNeedsNoGpu) {
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_GE(version, NCCL_VERSION(2, 0, 0));
}

// Item 4: ncclSystemError is a failed system call on this rank (SYSCHECK; /dev/shm's fallocate and
// mmap in shmutils.cc), not a dead peer: only ncclRemoteError is a peer failure (exit 4).
TEST(NcclErrors, SystemErrorIsLocalOnlyRemoteErrorIsAPeer) {
  EXPECT_FALSE(is_peer_failure(ncclSystemError));
  EXPECT_TRUE(is_peer_failure(ncclRemoteError));
  EXPECT_FALSE(is_peer_failure(ncclInvalidArgument));
  EXPECT_FALSE(is_peer_failure(ncclUnhandledCudaError));
}

TEST(NcclErrors, TheWholeTable) {
  for (int r = ncclSuccess; r < ncclNumResults; ++r) {
    const auto result = static_cast<ncclResult_t>(r);
    const ErrorClass error = classify_error(result);
    EXPECT_EQ(error.side == ErrorSide::peer, result == ncclRemoteError) << r;
    EXPECT_FALSE(error.cause.empty()) << r;
  }
  EXPECT_EQ(classify_error(ncclRemoteError).cause, "a peer process exited or the network between the ranks failed");
  const std::string shm = classify_error(ncclSystemError).cause;
  EXPECT_EQ(shm,
            "a system call failed on this rank (a socket, or /dev/shm for NCCL's shared-memory transport: a "
            "container's /dev/shm is often too small; enlarge it, e.g. docker run --shm-size=1g, or set "
            "NCCL_SHM_DISABLE=1)");
  EXPECT_EQ(classify_error(ncclUnhandledCudaError).cause, "a CUDA call inside NCCL failed on this rank");
  EXPECT_EQ(classify_error(ncclInternalError).side, ErrorSide::local);
  EXPECT_EQ(classify_error(ncclInvalidUsage).side, ErrorSide::local);
}

// The NCCL avg cases whose result is fixed whatever the inputs (docs/method.md): exactly these.
TEST(NcclTypes, AvgWithAFixedResultIsReportedUnsupported) {
  for (DType d : all_dtypes()) {
    for (int n : {2, 8, 16, 127, 128, 255, 256, 1000, 1023, 1024, 2048, 4096}) {
      const bool fixed = ((d == DType::int8 || d == DType::uint8) && n > info(d).exact_int_limit) ||
                         (d == DType::fp8_e4m3 && n >= 1024);
      EXPECT_EQ(avg_fixed_result(d, n).has_value(), fixed) << name(d) << " n=" << n;
    }
  }
  EXPECT_EQ(*avg_fixed_result(DType::int8, 128),
            "NCCL's avg of int8 over 128 ranks is 0 whatever the inputs (the sum is at most 127): nothing to check or "
            "to time; use int32 or a floating type");
}

}  // namespace
}  // namespace ccbench::nccl
