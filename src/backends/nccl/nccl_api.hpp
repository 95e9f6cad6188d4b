// Every CUDA and NCCL call the NCCL backend makes, behind one narrow interface. The real one
// (nccl_api_real.cpp) is one line per call; unit tests put a recording fake of this interface
// behind the backend (tests/unit/nccl/recording_api.hpp) to assert the order and the kind of calls
// without a GPU: graphs destroyed before the communicator, blocking measurement communicators,
// nothing captured inside a timed region, no call on a freed communicator.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/enums.hpp"
#include "core/pattern.hpp"

namespace ccbench::nccl {

struct DeviceInfo {
  std::string name;
  std::string pci_bus_id;
  std::uint64_t memory_bytes = 0;
  int cc_major = 0;
  int cc_minor = 0;
};

class NcclApi {
 public:
  virtual ~NcclApi() = default;

  // --- CUDA: devices, memory, streams, events ---
  virtual cudaError_t get_device_count(int* count) = 0;
  virtual cudaError_t driver_get_version(int* version) = 0;
  virtual cudaError_t set_device(int device) = 0;
  virtual cudaError_t device_info(int device, DeviceInfo* out) = 0;
  virtual const char* error_string(cudaError_t e) = 0;
  virtual cudaError_t mem_get_info(std::size_t* free_bytes, std::size_t* total_bytes) = 0;
  virtual cudaError_t malloc_device(void** ptr, std::size_t bytes) = 0;
  virtual cudaError_t malloc_host(void** ptr, std::size_t bytes) = 0;
  virtual cudaError_t free_device(void* ptr) = 0;
  virtual cudaError_t free_host(void* ptr) = 0;
  virtual cudaError_t stream_create(cudaStream_t* stream) = 0;
  virtual cudaError_t stream_destroy(cudaStream_t stream) = 0;
  virtual cudaError_t stream_query(cudaStream_t stream) = 0;
  virtual cudaError_t event_create(cudaEvent_t* event) = 0;
  virtual cudaError_t event_destroy(cudaEvent_t event) = 0;
  virtual cudaError_t event_record(cudaEvent_t event, cudaStream_t stream) = 0;
  virtual cudaError_t event_query(cudaEvent_t event) = 0;
  virtual cudaError_t event_elapsed_ms(float* ms, cudaEvent_t start, cudaEvent_t stop) = 0;
  virtual cudaError_t memset_async(void* ptr, int value, std::size_t bytes, cudaStream_t stream) = 0;
  virtual cudaError_t memcpy_to_host_async(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) = 0;

  // --- CUDA graphs (-G) ---
  virtual cudaError_t stream_begin_capture(cudaStream_t stream) = 0;
  virtual cudaError_t stream_end_capture(cudaStream_t stream, cudaGraph_t* graph) = 0;
  virtual cudaError_t graph_instantiate(cudaGraphExec_t* exec, cudaGraph_t graph) = 0;
  virtual cudaError_t graph_destroy(cudaGraph_t graph) = 0;
  virtual cudaError_t graph_exec_destroy(cudaGraphExec_t exec) = 0;
  virtual cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t stream) = 0;

  // --- our fill and verify kernels (nccl_kernels.hpp) ---
  virtual cudaError_t fill_input(DType dtype, void* dst, std::uint64_t n, Op op, const pattern::Params& p, int rank,
                                 std::uint64_t first, cudaStream_t stream) = 0;
  virtual cudaError_t fill_poison(DType dtype, void* dst, std::uint64_t n, cudaStream_t stream) = 0;
  virtual cudaError_t count_wrong(DType dtype, const void* out, std::uint64_t n, Op op, const pattern::Params& p,
                                  int rank, std::uint64_t count, std::uint64_t first, bool one_ulp,
                                  unsigned long long* counter, cudaStream_t stream) = 0;

  // --- NCCL: library and communicator ---
  virtual ncclResult_t get_version(int* version) = 0;
  virtual ncclResult_t get_unique_id(ncclUniqueId* id) = 0;
  virtual const char* nccl_error_string(ncclResult_t r) = 0;
  virtual const char* last_error(ncclComm_t comm) = 0;
  virtual ncclResult_t comm_init_rank_config(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank,
                                             ncclConfig_t* config) = 0;
  virtual ncclResult_t comm_split(ncclComm_t comm, int color, int key, ncclComm_t* child, ncclConfig_t* config) = 0;
  virtual ncclResult_t comm_get_async_error(ncclComm_t comm, ncclResult_t* state) = 0;
  virtual ncclResult_t comm_finalize(ncclComm_t comm) = 0;
  virtual ncclResult_t comm_destroy(ncclComm_t comm) = 0;
  virtual ncclResult_t comm_abort(ncclComm_t comm) = 0;

  // --- NCCL: operations ---
  virtual ncclResult_t all_reduce(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op,
                                  ncclComm_t comm, cudaStream_t stream) = 0;
  virtual ncclResult_t all_gather(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclComm_t comm,
                                  cudaStream_t stream) = 0;
  virtual ncclResult_t reduce_scatter(const void* send, void* recv, std::size_t count, ncclDataType_t type,
                                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) = 0;
  virtual ncclResult_t broadcast(const void* send, void* recv, std::size_t count, ncclDataType_t type, int root,
                                 ncclComm_t comm, cudaStream_t stream) = 0;
  virtual ncclResult_t reduce(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op,
                              int root, ncclComm_t comm, cudaStream_t stream) = 0;
  // ncclGather and ncclScatter (NCCL 2.28+); false when the loaded library lacks either (grouped
  // send/recv then, backends/nccl/grouped_calls.hpp).
  virtual bool has_gather_scatter(int runtime_version) = 0;
  virtual ncclResult_t gather(const void* send, void* recv, std::size_t count, ncclDataType_t type, int root,
                              ncclComm_t comm, cudaStream_t stream) = 0;
  virtual ncclResult_t scatter(const void* send, void* recv, std::size_t count, ncclDataType_t type, int root,
                               ncclComm_t comm, cudaStream_t stream) = 0;
  // ncclAlltoAll (NCCL 2.28+); false when the loaded library has none (grouped send/recv then).
  virtual bool has_alltoall(int runtime_version) = 0;
  virtual ncclResult_t all_to_all(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclComm_t comm,
                                  cudaStream_t stream) = 0;
  virtual ncclResult_t group_start() = 0;
  virtual ncclResult_t group_end() = 0;
  virtual ncclResult_t send(const void* buf, std::size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                            cudaStream_t stream) = 0;
  virtual ncclResult_t recv(void* buf, std::size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                            cudaStream_t stream) = 0;

  // --- NCCL: buffer registration (run -R) ---
  // ncclCommRegister/ncclCommDeregister (NCCL 2.19+); false when the loaded library lacks them.
  virtual bool has_comm_register(int runtime_version) = 0;
  virtual ncclResult_t comm_register(ncclComm_t comm, void* buf, std::size_t bytes, void** handle) = 0;
  virtual ncclResult_t comm_deregister(ncclComm_t comm, void* handle) = 0;
  // Symmetric windows (NCCL 2.27+): ncclMemAlloc/ncclMemFree and ncclCommWindowRegister (collective,
  // NCCL_WIN_COLL_SYMMETRIC) / ncclCommWindowDeregister; `window` is NCCL's ncclWindow_t. False when
  // the loaded library (or the headers this was built with) lack them.
  virtual bool has_windows(int runtime_version) = 0;
  virtual ncclResult_t mem_alloc(void** ptr, std::size_t bytes) = 0;
  virtual ncclResult_t mem_free(void* ptr) = 0;
  virtual ncclResult_t window_register(ncclComm_t comm, void* buf, std::size_t bytes, void** window) = 0;
  virtual ncclResult_t window_deregister(ncclComm_t comm, void* window) = 0;
};

// What a symmetric window's size must be a multiple of (NCCL_WIN_REQUIRED_ALIGNMENT).
inline constexpr std::size_t kWindowAlignmentBytes = 4096;

// The process's real CUDA and NCCL.
NcclApi& real_api();

}  // namespace ccbench::nccl
