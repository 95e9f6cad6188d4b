#include "fabric/fabric_memory.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "backends/backend.hpp"

#ifdef CCBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ccbench::fabric {
namespace {

#ifdef CCBENCH_HAVE_CUDA
void cuda_check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw BackendError(fmt::format("{}: {}", what, cudaGetErrorString(rc)));
}
#endif

}  // namespace

std::string cuda_unavailable_reason() {
#ifdef CCBENCH_HAVE_CUDA
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) return fmt::format("no usable CUDA device ({})", cudaGetErrorString(rc));
  if (count == 0) return "no CUDA device found";
  return "";
#else
  return "this ccbench was built without CUDA (configure where the CUDA toolkit is installed)";
#endif
}

Buffer::Buffer(MemoryKind kind, std::size_t bytes, int cuda_device) : kind_(kind), bytes_(bytes), device_(cuda_device) {
  const std::size_t alloc = bytes == 0 ? 1 : bytes;
  if (kind == MemoryKind::cuda) {
#ifdef CCBENCH_HAVE_CUDA
    cuda_check(cudaSetDevice(cuda_device), "cudaSetDevice");
    cuda_check(cudaMalloc(&data_, alloc), "cudaMalloc");
#else
    throw BackendError("--memory cuda: " + cuda_unavailable_reason());
#endif
    return;
  }
  const long page = ::sysconf(_SC_PAGESIZE);
  if (::posix_memalign(&data_, static_cast<std::size_t>(page > 0 ? page : 4096), alloc) != 0) {
    data_ = nullptr;
    throw BackendError(fmt::format("cannot allocate {} bytes of host memory", bytes));
  }
  std::memset(data_, 0, alloc);
}

Buffer::Buffer(Buffer&& other) noexcept
    : kind_(other.kind_),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      device_(other.device_) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    kind_ = other.kind_;
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    device_ = other.device_;
  }
  return *this;
}

Buffer::~Buffer() { release(); }

void Buffer::release() noexcept {
  if (data_ == nullptr) return;
#ifdef CCBENCH_HAVE_CUDA
  if (kind_ == MemoryKind::cuda) {
    cudaFree(data_);
    data_ = nullptr;
    return;
  }
#endif
  std::free(data_);
  data_ = nullptr;
}

void Buffer::copy_from_host(const void* src, std::size_t bytes) {
#ifdef CCBENCH_HAVE_CUDA
  if (kind_ == MemoryKind::cuda) {
    cuda_check(cudaMemcpy(data_, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    return;
  }
#endif
  std::memcpy(data_, src, bytes);
}

void Buffer::copy_to_host(void* dst, std::size_t bytes) const {
#ifdef CCBENCH_HAVE_CUDA
  if (kind_ == MemoryKind::cuda) {
    cuda_check(cudaMemcpy(dst, data_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    return;
  }
#endif
  std::memcpy(dst, data_, bytes);
}

}  // namespace ccbench::fabric
