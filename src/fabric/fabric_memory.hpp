// Buffers for the fabric tests: page-aligned host memory, or CUDA device memory handed to the
// provider through FI_HMEM (registered with iface FI_HMEM_CUDA). Fill and verify go through host
// copies, outside the timed region.
#pragma once

#include <rdma/fi_domain.h>

#include <cstddef>
#include <string>

#include "fabric/fabric_options.hpp"

namespace ccbench::fabric {

// Empty when --memory cuda can run here; otherwise why not (built without CUDA, no device).
std::string cuda_unavailable_reason();

class Buffer {
 public:
  Buffer() = default;
  // Throws BackendError when the memory cannot be allocated.
  Buffer(MemoryKind kind, std::size_t bytes, int cuda_device);
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  ~Buffer();

  void* data() const { return data_; }
  std::size_t size() const { return bytes_; }
  MemoryKind kind() const { return kind_; }
  fi_hmem_iface iface() const { return kind_ == MemoryKind::cuda ? FI_HMEM_CUDA : FI_HMEM_SYSTEM; }
  int device() const { return device_; }

  void copy_from_host(const void* src, std::size_t bytes);
  void copy_to_host(void* dst, std::size_t bytes) const;

 private:
  void release() noexcept;
  MemoryKind kind_ = MemoryKind::host;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  int device_ = 0;
};

}  // namespace ccbench::fabric
