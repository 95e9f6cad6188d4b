// The NCCL backend's fill and verify kernels against the host's reading of the same pattern:
// every dtype, op and redop, random sizes and rank counts; poisoned outputs must be counted wrong.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/nccl/nccl_kernels.hpp"
#include "core/pattern.hpp"
#include "core/types.hpp"

namespace ccbench::nccl {
namespace {

// Skips the test when no GPU is usable, or the kernels were not built for this one.
#define REQUIRE_GPU()                          \
  do {                                         \
    const std::string why = gpu_unavailable(); \
    if (!why.empty()) GTEST_SKIP() << why;     \
  } while (0)

std::string gpu_unavailable() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return std::string("no GPU: cudaGetDeviceCount: ") + cudaGetErrorString(e);
  if (count == 0) return "no GPU: 0 devices";
  void* probe = nullptr;
  if (cudaMalloc(&probe, 16) != cudaSuccess) return "no GPU: cudaMalloc failed";
  const cudaError_t k = fill_poison(DType::int8, probe, 16, nullptr);
  cudaDeviceSynchronize();
  cudaFree(probe);
  if (k != cudaSuccess) {
    return std::string("kernels do not run on this GPU (") + cudaGetErrorString(k) +
           "; add its architecture to CMAKE_CUDA_ARCHITECTURES)";
  }
  return "";
}

// The host's bytes for a pattern value in the dtype (CUDA's host conversions).
void host_value(DType d, std::int64_t v, unsigned char* out) {
  const auto f = static_cast<float>(v);
  switch (d) {
    case DType::int8: {
      auto x = static_cast<std::int8_t>(v);
      std::memcpy(out, &x, 1);
      break;
    }
    case DType::uint8: {
      auto x = static_cast<std::uint8_t>(v);
      std::memcpy(out, &x, 1);
      break;
    }
    case DType::int32: {
      auto x = static_cast<std::int32_t>(v);
      std::memcpy(out, &x, 4);
      break;
    }
    case DType::int64:
      std::memcpy(out, &v, 8);
      break;
    case DType::float32:
      std::memcpy(out, &f, 4);
      break;
    case DType::float64: {
      auto x = static_cast<double>(v);
      std::memcpy(out, &x, 8);
      break;
    }
    case DType::float16: {
      __half x = __float2half_rn(f);
      std::memcpy(out, &x, 2);
      break;
    }
    case DType::bfloat16: {
      __nv_bfloat16 x = __float2bfloat16_rn(f);
      std::memcpy(out, &x, 2);
      break;
    }
    case DType::fp8_e4m3: {
      __nv_fp8_e4m3 x(f);
      std::memcpy(out, &x, 1);
      break;
    }
    case DType::fp8_e5m2: {
      __nv_fp8_e5m2 x(f);
      std::memcpy(out, &x, 1);
      break;
    }
  }
}

pattern::Params params_for(DType d, RedOp redop, int nranks, std::uint32_t seed) {
  pattern::Params p;
  p.nranks = nranks;
  p.seed = seed;
  p.exact_limit = info(d).exact_int_limit;
  p.is_signed = info(d).is_signed;
  p.redop = redop;
  p.root = nranks - 1;
  return p;
}

struct DeviceBuffer {
  explicit DeviceBuffer(std::size_t bytes) { EXPECT_EQ(cudaMalloc(&ptr, bytes == 0 ? 1 : bytes), cudaSuccess); }
  ~DeviceBuffer() { cudaFree(ptr); }
  void* ptr = nullptr;
};

unsigned long long count_wrong_now(DType d, const void* out, std::uint64_t n, Op op, const pattern::Params& p, int rank,
                                   std::uint64_t count, bool one_ulp) {
  unsigned long long* counter = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&counter), sizeof *counter), cudaSuccess);
  cudaMemset(counter, 0, sizeof *counter);
  EXPECT_EQ(count_wrong(d, out, n, op, p, rank, count, 0, one_ulp, counter, nullptr), cudaSuccess);
  unsigned long long host = 0;
  EXPECT_EQ(cudaMemcpy(&host, counter, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(counter);
  return host;
}

constexpr Op kOps[] = {Op::allreduce, Op::allgather, Op::alltoall, Op::reduce_scatter, Op::broadcast};

TEST(NcclKernels, FillMatchesTheHostPattern) {
  REQUIRE_GPU();
  std::mt19937 rng(42);
  for (DType d : all_dtypes()) {
    const std::size_t elt = info(d).size_bytes;
    for (Op op : kOps) {
      for (RedOp redop : all_redops()) {
        if (!info(op).is_reduction && redop != RedOp::sum) continue;
        const int nranks = std::uniform_int_distribution<int>(1, 64)(rng);
        const int rank = std::uniform_int_distribution<int>(0, nranks - 1)(rng);
        const std::uint64_t n = std::uniform_int_distribution<std::uint64_t>(1, 200000)(rng);
        const std::uint64_t first = std::uniform_int_distribution<std::uint64_t>(0, 1000)(rng);
        pattern::Params p =
            params_for(d, info(op).is_reduction ? redop : RedOp::none, nranks, static_cast<std::uint32_t>(rng()));
        DeviceBuffer buffer(n * elt);
        ASSERT_EQ(fill_input(d, buffer.ptr, n, op, p, rank, first, nullptr), cudaSuccess);
        std::vector<unsigned char> got(n * elt);
        ASSERT_EQ(cudaMemcpy(got.data(), buffer.ptr, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
        std::vector<unsigned char> want(n * elt);
        for (std::uint64_t i = 0; i < n; ++i) {
          host_value(d, pattern::input_value(op, p, rank, first + i), want.data() + i * elt);
        }
        ASSERT_EQ(got, want) << name(d) << " " << name(op) << " " << name(redop) << " n=" << n;
      }
    }
  }
}

TEST(NcclKernels, VerifyAcceptsExpectedAndCountsEachPoisonedElement) {
  REQUIRE_GPU();
  std::mt19937 rng(7);
  for (DType d : all_dtypes()) {
    const std::size_t elt = info(d).size_bytes;
    for (Op op : kOps) {
      for (RedOp redop : all_redops()) {
        if (!info(op).is_reduction && redop != RedOp::sum) continue;
        const int nranks = std::uniform_int_distribution<int>(1, 64)(rng);
        const int rank = std::uniform_int_distribution<int>(0, nranks - 1)(rng);
        const std::uint64_t count = std::uniform_int_distribution<std::uint64_t>(1, 3000)(rng);
        const std::uint64_t n = (op == Op::allgather || op == Op::alltoall) ? count * nranks : count;
        pattern::Params p =
            params_for(d, info(op).is_reduction ? redop : RedOp::none, nranks, static_cast<std::uint32_t>(rng()));
        std::vector<unsigned char> expected(n * elt);
        for (std::uint64_t i = 0; i < n; ++i) {
          host_value(d, pattern::expected_value(op, p, rank, i, count), expected.data() + i * elt);
        }
        DeviceBuffer out(n * elt);
        ASSERT_EQ(cudaMemcpy(out.ptr, expected.data(), expected.size(), cudaMemcpyHostToDevice), cudaSuccess);
        const bool one_ulp = info(d).is_floating && redop == RedOp::avg && info(op).is_reduction;
        ASSERT_EQ(count_wrong_now(d, out.ptr, n, op, p, rank, count, one_ulp), 0u)
            << name(d) << " " << name(op) << " " << name(redop) << " nranks=" << nranks;

        // Poison k distinct elements: exactly k wrong.
        const std::uint64_t k = std::min<std::uint64_t>(n, std::uniform_int_distribution<std::uint64_t>(1, 17)(rng));
        for (std::uint64_t j = 0; j < k; ++j) {
          const std::uint64_t at = j * (n / k);
          ASSERT_EQ(fill_poison(d, static_cast<char*>(out.ptr) + at * elt, 1, nullptr), cudaSuccess);
        }
        ASSERT_EQ(count_wrong_now(d, out.ptr, n, op, p, rank, count, one_ulp), k)
            << name(d) << " " << name(op) << " " << name(redop);

        // A fully poisoned output (an op that never ran) is all wrong.
        ASSERT_EQ(fill_poison(d, out.ptr, n, nullptr), cudaSuccess);
        ASSERT_EQ(count_wrong_now(d, out.ptr, n, op, p, rank, count, one_ulp), n) << name(d) << " " << name(op);
      }
    }
  }
}

TEST(NcclKernels, OneRankOpsAreCopies) {
  // With one rank every op's output is its input: fill, copy, verify must find nothing wrong.
  REQUIRE_GPU();
  for (DType d : all_dtypes()) {
    const std::size_t elt = info(d).size_bytes;
    for (Op op : kOps) {
      for (RedOp redop : all_redops()) {
        if (!info(op).is_reduction && redop != RedOp::sum) continue;
        const std::uint64_t n = 4099;
        pattern::Params p = params_for(d, info(op).is_reduction ? redop : RedOp::none, 1, 99);
        p.root = 0;
        DeviceBuffer in(n * elt);
        DeviceBuffer out(n * elt);
        ASSERT_EQ(fill_poison(d, out.ptr, n, nullptr), cudaSuccess);
        ASSERT_EQ(fill_input(d, in.ptr, n, op, p, 0, 0, nullptr), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(out.ptr, in.ptr, n * elt, cudaMemcpyDeviceToDevice), cudaSuccess);
        const bool one_ulp = info(d).is_floating && redop == RedOp::avg && info(op).is_reduction;
        EXPECT_EQ(count_wrong_now(d, out.ptr, n, op, p, 0, n, one_ulp), 0u) << name(d) << " " << name(op);
      }
    }
  }
}

TEST(NcclKernels, AvgToleranceIsOneUlpOnly) {
  REQUIRE_GPU();
  // Allreduce avg, one rank, expected value k in {0,1,2}: k + 1 ulp passes, k + 2 ulp does not.
  for (DType d : {DType::float16, DType::bfloat16, DType::float32}) {
    pattern::Params p = params_for(d, RedOp::avg, 1, 3);
    const std::uint64_t n = 512;
    std::vector<float> want(n);
    std::uint64_t nonzero = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      want[i] = static_cast<float>(pattern::expected_value(Op::allreduce, p, 0, i, n));
      nonzero += want[i] != 0 ? 1 : 0;
    }
    const int mantissa = d == DType::float16 ? 10 : (d == DType::bfloat16 ? 7 : 23);
    for (int ulps : {1, 2}) {
      std::vector<unsigned char> bytes(n * info(d).size_bytes);
      for (std::uint64_t i = 0; i < n; ++i) {
        float v = want[i];
        if (v != 0) v += static_cast<float>(ulps) * std::ldexp(1.0f, std::ilogb(v) - mantissa);
        switch (d) {
          case DType::float16: {
            __half x = __float2half_rn(v);
            std::memcpy(&bytes[i * 2], &x, 2);
            break;
          }
          case DType::bfloat16: {
            __nv_bfloat16 x = __float2bfloat16_rn(v);
            std::memcpy(&bytes[i * 2], &x, 2);
            break;
          }
          default:
            std::memcpy(&bytes[i * 4], &v, 4);
            break;
        }
      }
      DeviceBuffer out(bytes.size());
      ASSERT_EQ(cudaMemcpy(out.ptr, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
      EXPECT_EQ(count_wrong_now(d, out.ptr, n, Op::allreduce, p, 0, n, true), ulps == 1 ? 0u : nonzero) << name(d);
      EXPECT_EQ(count_wrong_now(d, out.ptr, n, Op::allreduce, p, 0, n, false), nonzero) << name(d);
    }
  }
}

}  // namespace
}  // namespace ccbench::nccl
