// The real CUDA and NCCL behind NcclApi: one line per call, no logic (the logic is in the backend,
// where the recording fake of the unit tests sees it).
#include <cuda_runtime.h>
#include <dlfcn.h>

#include "backends/nccl/nccl_api.hpp"
#include "backends/nccl/nccl_kernels.hpp"

namespace ccbench::nccl {
namespace {

using AlltoAllFn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
using RootedFn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
using RegisterFn = ncclResult_t (*)(ncclComm_t, void*, size_t, void**);
using DeregisterFn = ncclResult_t (*)(ncclComm_t, void*);
using MemAllocFn = ncclResult_t (*)(void**, size_t);
using MemFreeFn = ncclResult_t (*)(void*);
// ncclWindow_t is a pointer: declared here as void* so the interface does not need 2.27's headers.
using WindowRegisterFn = ncclResult_t (*)(ncclComm_t, void*, size_t, void**, int);

template <typename Fn>
Fn resolve(const char* symbol) {
  return reinterpret_cast<Fn>(::dlsym(RTLD_DEFAULT, symbol));
}

#ifdef NCCL_WIN_REQUIRED_ALIGNMENT
static_assert(NCCL_WIN_REQUIRED_ALIGNMENT == kWindowAlignmentBytes, "kWindowAlignmentBytes follows NCCL's headers");
#endif

class RealApi final : public NcclApi {
 public:
  cudaError_t get_device_count(int* count) override { return cudaGetDeviceCount(count); }
  cudaError_t driver_get_version(int* version) override { return cudaDriverGetVersion(version); }
  cudaError_t set_device(int device) override { return cudaSetDevice(device); }
  cudaError_t device_info(int device, DeviceInfo* out) override {
    cudaDeviceProp prop{};
    if (const cudaError_t e = cudaGetDeviceProperties(&prop, device); e != cudaSuccess) return e;
    char bus[32] = {};
    if (const cudaError_t e = cudaDeviceGetPCIBusId(bus, sizeof bus, device); e != cudaSuccess) return e;
    *out = DeviceInfo{prop.name, bus, prop.totalGlobalMem, prop.major, prop.minor};
    return cudaSuccess;
  }
  const char* error_string(cudaError_t e) override { return cudaGetErrorString(e); }
  cudaError_t mem_get_info(std::size_t* f, std::size_t* t) override { return cudaMemGetInfo(f, t); }
  cudaError_t malloc_device(void** ptr, std::size_t bytes) override { return cudaMalloc(ptr, bytes); }
  cudaError_t malloc_host(void** ptr, std::size_t bytes) override { return cudaMallocHost(ptr, bytes); }
  cudaError_t free_device(void* ptr) override { return cudaFree(ptr); }
  cudaError_t free_host(void* ptr) override { return cudaFreeHost(ptr); }
  cudaError_t stream_create(cudaStream_t* s) override { return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking); }
  cudaError_t stream_destroy(cudaStream_t s) override { return cudaStreamDestroy(s); }
  cudaError_t stream_query(cudaStream_t s) override { return cudaStreamQuery(s); }
  cudaError_t event_create(cudaEvent_t* e) override { return cudaEventCreate(e); }
  cudaError_t event_destroy(cudaEvent_t e) override { return cudaEventDestroy(e); }
  cudaError_t event_record(cudaEvent_t e, cudaStream_t s) override { return cudaEventRecord(e, s); }
  cudaError_t event_query(cudaEvent_t e) override { return cudaEventQuery(e); }
  cudaError_t event_elapsed_ms(float* ms, cudaEvent_t a, cudaEvent_t b) override {
    return cudaEventElapsedTime(ms, a, b);
  }
  cudaError_t memset_async(void* p, int v, std::size_t n, cudaStream_t s) override {
    return cudaMemsetAsync(p, v, n, s);
  }
  cudaError_t memcpy_to_host_async(void* d, const void* src, std::size_t n, cudaStream_t s) override {
    return cudaMemcpyAsync(d, src, n, cudaMemcpyDeviceToHost, s);
  }

  cudaError_t stream_begin_capture(cudaStream_t s) override {
    return cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  }
  cudaError_t stream_end_capture(cudaStream_t s, cudaGraph_t* g) override { return cudaStreamEndCapture(s, g); }
  cudaError_t graph_instantiate(cudaGraphExec_t* x, cudaGraph_t g) override { return cudaGraphInstantiate(x, g, 0); }
  cudaError_t graph_destroy(cudaGraph_t g) override { return cudaGraphDestroy(g); }
  cudaError_t graph_exec_destroy(cudaGraphExec_t x) override { return cudaGraphExecDestroy(x); }
  cudaError_t graph_launch(cudaGraphExec_t x, cudaStream_t s) override { return cudaGraphLaunch(x, s); }

  cudaError_t fill_input(DType d, void* dst, std::uint64_t n, Op op, const pattern::Params& p, int rank,
                         std::uint64_t first, cudaStream_t s) override {
    return nccl::fill_input(d, dst, n, op, p, rank, first, s);
  }
  cudaError_t fill_poison(DType d, void* dst, std::uint64_t n, cudaStream_t s) override {
    return nccl::fill_poison(d, dst, n, s);
  }
  cudaError_t count_wrong(DType d, const void* out, std::uint64_t n, Op op, const pattern::Params& p, int rank,
                          std::uint64_t count, std::uint64_t first, bool one_ulp, unsigned long long* counter,
                          cudaStream_t s) override {
    return nccl::count_wrong(d, out, n, op, p, rank, count, first, one_ulp, counter, s);
  }

  ncclResult_t get_version(int* v) override { return ncclGetVersion(v); }
  ncclResult_t get_unique_id(ncclUniqueId* id) override { return ncclGetUniqueId(id); }
  const char* nccl_error_string(ncclResult_t r) override { return ncclGetErrorString(r); }
  const char* last_error(ncclComm_t comm) override { return ncclGetLastError(comm); }
  ncclResult_t comm_init_rank_config(ncclComm_t* c, int n, const ncclUniqueId& id, int rank,
                                     ncclConfig_t* config) override {
    return ncclCommInitRankConfig(c, n, id, rank, config);
  }
  ncclResult_t comm_split(ncclComm_t c, int color, int key, ncclComm_t* child, ncclConfig_t* config) override {
    return ncclCommSplit(c, color, key, child, config);
  }
  ncclResult_t comm_get_async_error(ncclComm_t c, ncclResult_t* state) override {
    return ncclCommGetAsyncError(c, state);
  }
  ncclResult_t comm_finalize(ncclComm_t c) override { return ncclCommFinalize(c); }
  ncclResult_t comm_destroy(ncclComm_t c) override { return ncclCommDestroy(c); }
  ncclResult_t comm_abort(ncclComm_t c) override { return ncclCommAbort(c); }

  ncclResult_t all_reduce(const void* s, void* r, std::size_t n, ncclDataType_t t, ncclRedOp_t op, ncclComm_t c,
                          cudaStream_t st) override {
    return ncclAllReduce(s, r, n, t, op, c, st);
  }
  ncclResult_t all_gather(const void* s, void* r, std::size_t n, ncclDataType_t t, ncclComm_t c,
                          cudaStream_t st) override {
    return ncclAllGather(s, r, n, t, c, st);
  }
  ncclResult_t reduce_scatter(const void* s, void* r, std::size_t n, ncclDataType_t t, ncclRedOp_t op, ncclComm_t c,
                              cudaStream_t st) override {
    return ncclReduceScatter(s, r, n, t, op, c, st);
  }
  ncclResult_t broadcast(const void* s, void* r, std::size_t n, ncclDataType_t t, int root, ncclComm_t c,
                         cudaStream_t st) override {
    return ncclBroadcast(s, r, n, t, root, c, st);
  }
  ncclResult_t reduce(const void* s, void* r, std::size_t n, ncclDataType_t t, ncclRedOp_t o, int root, ncclComm_t c,
                      cudaStream_t st) override {
    return ncclReduce(s, r, n, t, o, root, c, st);
  }
  // ncclGather and ncclScatter appeared in NCCL 2.28: resolved at run time as ncclAlltoAll is.
  bool has_gather_scatter(int runtime_version) override {
    if (runtime_version >= NCCL_VERSION(2, 28, 0)) {
      gather_ = reinterpret_cast<RootedFn>(::dlsym(RTLD_DEFAULT, "ncclGather"));
      scatter_ = reinterpret_cast<RootedFn>(::dlsym(RTLD_DEFAULT, "ncclScatter"));
    }
    return gather_ != nullptr && scatter_ != nullptr;
  }
  ncclResult_t gather(const void* s, void* r, std::size_t n, ncclDataType_t t, int root, ncclComm_t c,
                      cudaStream_t st) override {
    return gather_(s, r, n, t, root, c, st);
  }
  ncclResult_t scatter(const void* s, void* r, std::size_t n, ncclDataType_t t, int root, ncclComm_t c,
                       cudaStream_t st) override {
    return scatter_(s, r, n, t, root, c, st);
  }
  // ncclAlltoAll appeared in NCCL 2.28; resolved at run time so a binary built against 2.28
  // headers still starts with an older libnccl.so.2.
  bool has_alltoall(int runtime_version) override {
    if (runtime_version >= NCCL_VERSION(2, 28, 0))
      alltoall_ = reinterpret_cast<AlltoAllFn>(::dlsym(RTLD_DEFAULT, "ncclAlltoAll"));
    return alltoall_ != nullptr;
  }
  ncclResult_t all_to_all(const void* s, void* r, std::size_t n, ncclDataType_t t, ncclComm_t c,
                          cudaStream_t st) override {
    return alltoall_(s, r, n, t, c, st);
  }
  ncclResult_t group_start() override { return ncclGroupStart(); }
  ncclResult_t group_end() override { return ncclGroupEnd(); }
  ncclResult_t send(const void* b, std::size_t n, ncclDataType_t t, int peer, ncclComm_t c, cudaStream_t st) override {
    return ncclSend(b, n, t, peer, c, st);
  }
  ncclResult_t recv(void* b, std::size_t n, ncclDataType_t t, int peer, ncclComm_t c, cudaStream_t st) override {
    return ncclRecv(b, n, t, peer, c, st);
  }

  // The registration calls are resolved at run time too (2.19 and 2.27), for the same reason.
  bool has_comm_register(int runtime_version) override {
    if (runtime_version >= NCCL_VERSION(2, 19, 0)) {
      register_ = resolve<RegisterFn>("ncclCommRegister");
      deregister_ = resolve<DeregisterFn>("ncclCommDeregister");
    }
    return register_ != nullptr && deregister_ != nullptr;
  }
  ncclResult_t comm_register(ncclComm_t c, void* b, std::size_t n, void** handle) override {
    return register_(c, b, n, handle);
  }
  ncclResult_t comm_deregister(ncclComm_t c, void* handle) override { return deregister_(c, handle); }
  bool has_windows(int runtime_version) override {
#ifdef NCCL_WIN_COLL_SYMMETRIC
    if (runtime_version >= NCCL_VERSION(2, 27, 0)) {
      mem_alloc_ = resolve<MemAllocFn>("ncclMemAlloc");
      mem_free_ = resolve<MemFreeFn>("ncclMemFree");
      window_register_ = resolve<WindowRegisterFn>("ncclCommWindowRegister");
      window_deregister_ = resolve<DeregisterFn>("ncclCommWindowDeregister");
    }
#else
    (void)runtime_version;
#endif
    return mem_alloc_ != nullptr && mem_free_ != nullptr && window_register_ != nullptr &&
           window_deregister_ != nullptr;
  }
  ncclResult_t mem_alloc(void** p, std::size_t n) override { return mem_alloc_(p, n); }
  ncclResult_t mem_free(void* p) override { return mem_free_(p); }
  ncclResult_t window_register(ncclComm_t c, void* b, std::size_t n, void** window) override {
#ifdef NCCL_WIN_COLL_SYMMETRIC
    return window_register_(c, b, n, window, NCCL_WIN_COLL_SYMMETRIC);
#else
    (void)c, (void)b, (void)n, (void)window;
    return ncclInvalidUsage;
#endif
  }
  ncclResult_t window_deregister(ncclComm_t c, void* window) override { return window_deregister_(c, window); }

 private:
  RegisterFn register_ = nullptr;
  DeregisterFn deregister_ = nullptr;
  MemAllocFn mem_alloc_ = nullptr;
  MemFreeFn mem_free_ = nullptr;
  WindowRegisterFn window_register_ = nullptr;
  DeregisterFn window_deregister_ = nullptr;
  AlltoAllFn alltoall_ = nullptr;
  RootedFn gather_ = nullptr;
  RootedFn scatter_ = nullptr;
};

}  // namespace

NcclApi& real_api() {
  static RealApi api;
  return api;
}

}  // namespace ccbench::nccl
