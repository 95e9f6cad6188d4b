// Fill and verify kernels, one template per dtype. Kept to one translation unit with few
// instantiations (3 kernels x 10 dtypes) so CI compiles it quickly for every architecture.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/nccl/nccl_kernels.hpp"

namespace ccbench::nccl {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kMaxBlocks = 4096;

unsigned blocks_for(std::uint64_t n) {
  const std::uint64_t b = (n + kThreads - 1) / kThreads;
  return b == 0 ? 1u : (b > kMaxBlocks ? kMaxBlocks : static_cast<unsigned>(b));
}

// Per-type traits: conversion from the pattern's small integers (through float for the narrow
// floating types, which is exact for them), the comparison value, the poison bits.
template <typename T>
struct Traits;

template <typename I>
struct IntTraits {
  static constexpr bool kFloating = false;
  __device__ static I from(std::int64_t v) { return static_cast<I>(v); }
  __device__ static bool same(I a, I b, bool) { return a == b; }
};

template <>
struct Traits<std::int8_t> : IntTraits<std::int8_t> {
  __device__ static std::int8_t poison() { return INT8_MIN; }
};
template <>
struct Traits<std::uint8_t> : IntTraits<std::uint8_t> {
  __device__ static std::uint8_t poison() { return 0xFF; }
};
template <>
struct Traits<std::int32_t> : IntTraits<std::int32_t> {
  __device__ static std::int32_t poison() { return INT32_MIN; }
};
template <>
struct Traits<std::int64_t> : IntTraits<std::int64_t> {
  __device__ static std::int64_t poison() { return INT64_MIN; }
};

// |got - want| within one ulp of `want` (want != 0), for a type with `mantissa_bits` stored bits.
// Zero has no tolerance: avg of zeros is exactly zero.
__device__ bool within_ulp(double got, double want, int mantissa_bits) {
  if (!(got == got)) return false;  // NaN
  if (want == 0.0) return got == 0.0;
  const double ulp = ldexp(1.0, ilogb(want) - mantissa_bits);
  return fabs(got - want) <= ulp;
}

// Floating types compare through double (exact for every type here).
template <typename T, int MantissaBits>
struct FloatTraits {
  static constexpr bool kFloating = true;
  __device__ static bool same(T a, T b, bool one_ulp) {
    const double x = Traits<T>::to_double(a);
    const double y = Traits<T>::to_double(b);
    if (one_ulp) return within_ulp(x, y, MantissaBits);
    return x == y;  // false for NaN
  }
};

template <>
struct Traits<float> : FloatTraits<float, 23> {
  __device__ static float from_float(float v) { return static_cast<float>(v); }
  __device__ static float from(std::int64_t v) { return static_cast<float>(v); }
  __device__ static double to_double(float v) { return v; }
  __device__ static float poison() { return __int_as_float(0x7FC00000); }
};
template <>
struct Traits<double> : FloatTraits<double, 52> {
  __device__ static double from_float(float v) { return static_cast<double>(v); }
  __device__ static double from(std::int64_t v) { return static_cast<double>(v); }
  __device__ static double to_double(double v) { return v; }
  __device__ static double poison() { return __longlong_as_double(0x7FF8000000000000LL); }
};
template <>
struct Traits<__half> : FloatTraits<__half, 10> {
  __device__ static __half from_float(float v) { return __float2half_rn(v); }
  __device__ static __half from(std::int64_t v) { return __float2half_rn(static_cast<float>(v)); }
  __device__ static double to_double(__half v) { return __half2float(v); }
  __device__ static __half poison() { return __ushort_as_half(0x7E00); }
};
template <>
struct Traits<__nv_bfloat16> : FloatTraits<__nv_bfloat16, 7> {
  __device__ static __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
  __device__ static __nv_bfloat16 from(std::int64_t v) { return __float2bfloat16_rn(static_cast<float>(v)); }
  __device__ static double to_double(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 poison() { return __ushort_as_bfloat16(0x7FC0); }
};
template <>
struct Traits<__nv_fp8_e4m3> : FloatTraits<__nv_fp8_e4m3, 3> {
  __device__ static __nv_fp8_e4m3 from_float(float v) { return __nv_fp8_e4m3(v); }
  __device__ static __nv_fp8_e4m3 from(std::int64_t v) { return __nv_fp8_e4m3(static_cast<float>(v)); }
  __device__ static double to_double(__nv_fp8_e4m3 v) { return static_cast<float>(v); }
  __device__ static __nv_fp8_e4m3 poison() {
    __nv_fp8_e4m3 x;
    x.__x = 0x7F;  // NaN (e4m3 has no infinities)
    return x;
  }
};
template <>
struct Traits<__nv_fp8_e5m2> : FloatTraits<__nv_fp8_e5m2, 2> {
  __device__ static __nv_fp8_e5m2 from_float(float v) { return __nv_fp8_e5m2(v); }
  __device__ static __nv_fp8_e5m2 from(std::int64_t v) { return __nv_fp8_e5m2(static_cast<float>(v)); }
  __device__ static double to_double(__nv_fp8_e5m2 v) { return static_cast<float>(v); }
  __device__ static __nv_fp8_e5m2 poison() {
    __nv_fp8_e5m2 x;
    x.__x = 0x7F;  // NaN
    return x;
  }
};

template <typename T>
__global__ void fill_input_kernel(T* dst, std::uint64_t n, Op op, pattern::Params p, int rank, std::uint64_t first) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    dst[i] = Traits<T>::from(pattern::input_value(op, p, rank, first + i));
  }
}

template <typename T>
__global__ void fill_poison_kernel(T* dst, std::uint64_t n) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    dst[i] = Traits<T>::poison();
  }
}

template <typename T>
__global__ void count_wrong_kernel(const T* out, std::uint64_t n, Op op, pattern::Params p, int rank,
                                   std::uint64_t count, std::uint64_t first, bool one_ulp,
                                   unsigned long long* counter) {
  __shared__ unsigned long long block_wrong;
  if (threadIdx.x == 0) block_wrong = 0;
  __syncthreads();
  unsigned long long wrong = 0;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  // avg of a floating type over more ranks than its exact-integer limit: the expected value is the
  // owner's input times 1/n rounded to the type, as NCCL scales (enqueue.cc: float(1.0/nRanks)
  // converted to the type); a power of two times a value of the type, so exact (core/pattern.hpp).
  double scale = 1.0;
  bool scaled = false;
  if constexpr (Traits<T>::kFloating) {
    scaled = pattern::is_reduction(op) && pattern::avg_scaled(p);
    if (scaled) scale = Traits<T>::to_double(Traits<T>::from_float(static_cast<float>(1.0 / p.nranks)));
  }
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::int64_t value = pattern::expected_value(op, p, rank, first + i, count);
    if constexpr (Traits<T>::kFloating) {
      if (scaled) {
        wrong += Traits<T>::to_double(out[i]) == static_cast<double>(value) * scale ? 0 : 1;
        continue;
      }
    }
    wrong += Traits<T>::same(out[i], Traits<T>::from(value), one_ulp) ? 0 : 1;
  }
  if (wrong != 0) atomicAdd(&block_wrong, wrong);
  __syncthreads();
  if (threadIdx.x == 0 && block_wrong != 0) atomicAdd(counter, block_wrong);
}

// Calls f with a typed null pointer for the dtype's element type.
template <typename F>
cudaError_t with_type(DType dtype, F&& f) {
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
    case DType::float16:
      return f(static_cast<__half*>(nullptr));
    case DType::bfloat16:
      return f(static_cast<__nv_bfloat16*>(nullptr));
    case DType::fp8_e4m3:
      return f(static_cast<__nv_fp8_e4m3*>(nullptr));
    case DType::fp8_e5m2:
      return f(static_cast<__nv_fp8_e5m2*>(nullptr));
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t fill_input(DType dtype, void* dst, std::uint64_t n, Op op, const pattern::Params& p, int rank,
                       std::uint64_t first, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return with_type(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_input_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<T*>(dst), n, op, p, rank, first);
    return cudaGetLastError();
  });
}

cudaError_t fill_poison(DType dtype, void* dst, std::uint64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return with_type(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_poison_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<T*>(dst), n);
    return cudaGetLastError();
  });
}

cudaError_t count_wrong(DType dtype, const void* out, std::uint64_t n, Op op, const pattern::Params& p, int rank,
                        std::uint64_t count, std::uint64_t first, bool one_ulp, unsigned long long* counter,
                        cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return with_type(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    count_wrong_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const T*>(out), n, op, p, rank, count,
                                                                  first, one_ulp, counter);
    return cudaGetLastError();
  });
}

}  // namespace ccbench::nccl
