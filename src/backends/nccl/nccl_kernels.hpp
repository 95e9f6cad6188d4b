// Fill and verify kernels of the NCCL backend (nccl_kernels.cu), callable from plain C++.
//
// The expected value of every output element is computed in the kernel from the seeded pattern
// (core/pattern.hpp, compiled for host and device), so only the send and receive buffers live on
// the GPU. Element i of a region is logical position `first + i` of the pattern.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/enums.hpp"
#include "core/pattern.hpp"

namespace ccbench::nccl {

// dst[i] = pattern::input_value(op, p, rank, first + i) converted to the dtype.
cudaError_t fill_input(DType dtype, void* dst, std::uint64_t n, Op op, const pattern::Params& p, int rank,
                       std::uint64_t first, cudaStream_t stream);

// dst[i] = a value the pattern never expects (NaN for floating types, the most negative value for
// signed integers, 255 for uint8), so output an op failed to write is counted wrong.
cudaError_t fill_poison(DType dtype, void* dst, std::uint64_t n, cudaStream_t stream);

// Adds to *counter (device memory) the number of out[i] that differ from
// pattern::expected_value(op, p, rank, first + i, count). With `one_ulp`, floating values within
// one unit in the last place of the expected value pass (redop avg, see docs/nccl-backend.md).
cudaError_t count_wrong(DType dtype, const void* out, std::uint64_t n, Op op, const pattern::Params& p, int rank,
                        std::uint64_t count, std::uint64_t first, bool one_ulp, unsigned long long* counter,
                        cudaStream_t stream);

}  // namespace ccbench::nccl
