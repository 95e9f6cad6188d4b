// A recording fake of the NCCL backend's own call interface (backends/nccl/nccl_api.hpp), not of
// NCCL: every call is appended to a log ("ncclCommAbort", "cudaGraphExecDestroy", "ncclAllReduce
// blocking=1", ...), communicators are handles with a blocking flag and a live flag, and a call
// on a freed communicator is logged as "USE-AFTER-FREE <call>". Ops can be made to hang (a
// blocking call waits, a nonblocking one reports ncclInProgress) until released, to test abort.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backends/nccl/nccl_api.hpp"

namespace ccbench::nccl::testing {

class RecordingApi final : public NcclApi {
 public:
  ~RecordingApi() override {
    for (void* p : allocations_) std::free(p);
  }

  std::vector<std::string> calls() const {
    std::lock_guard hold(mutex_);
    return calls_;
  }
  // Index of the first call that starts with `prefix` at or after `from`; -1 when none.
  long find(const std::string& prefix, long from = 0) const {
    const auto all = calls();
    for (long i = from; i < static_cast<long>(all.size()); ++i) {
      if (all[static_cast<std::size_t>(i)].rfind(prefix, 0) == 0) return i;
    }
    return -1;
  }
  long count(const std::string& prefix) const {
    long n = 0;
    for (const auto& c : calls()) n += c.rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
  }
  bool has(const std::string& prefix) const { return find(prefix) >= 0; }

  // A marker of the test's own in the log ("sample begin").
  void note(const std::string& text) { record("# " + text); }

  // Ops (collectives) hang from now on until release_ops().
  void hang_ops() {
    std::lock_guard hold(mutex_);
    hanging_ = true;
  }
  void release_ops() {
    {
      std::lock_guard hold(mutex_);
      hanging_ = false;
    }
    released_.notify_all();
  }

  // Ops (collectives) return `r` from now on (ncclSuccess: they succeed again).
  void fail_ops_with(ncclResult_t r) {
    std::lock_guard hold(mutex_);
    op_result_ = r;
  }

  // --- CUDA ---
  cudaError_t get_device_count(int* count) override {
    record("cudaGetDeviceCount");
    *count = 1;
    return cudaSuccess;
  }
  cudaError_t driver_get_version(int* v) override {
    *v = 13000;
    return cudaSuccess;
  }
  cudaError_t set_device(int) override { return record("cudaSetDevice"), cudaSuccess; }
  cudaError_t device_info(int, DeviceInfo* out) override {
    *out = DeviceInfo{"Fake H200", "00000000:19:00.0", 141ull << 30, 9, 0};
    return cudaSuccess;
  }
  const char* error_string(cudaError_t) override { return "fake CUDA error"; }
  cudaError_t mem_get_info(std::size_t* f, std::size_t* t) override {
    *f = 100ull << 30;
    *t = 141ull << 30;
    return cudaSuccess;
  }
  // Device buffers are logged by their allocation's number ("cudaMalloc buf=2 bytes=4096",
  // "cudaFree buf=2"), as are ncclMemAlloc's and the registrations of -R.
  cudaError_t malloc_device(void** p, std::size_t bytes) override {
    allocate(p, bytes);
    record("cudaMalloc buf=" + buffer_id(*p) + " bytes=" + std::to_string(bytes));
    return cudaSuccess;
  }
  cudaError_t malloc_host(void** p, std::size_t bytes) override { return allocate(p, bytes), cudaSuccess; }
  cudaError_t free_device(void* p) override {  // the memory is freed with the fake
    return record("cudaFree buf=" + buffer_id(p)), cudaSuccess;
  }
  cudaError_t free_host(void*) override { return cudaSuccess; }
  cudaError_t stream_create(cudaStream_t* s) override {
    *s = reinterpret_cast<cudaStream_t>(handle());
    return cudaSuccess;
  }
  cudaError_t stream_destroy(cudaStream_t) override { return record("cudaStreamDestroy"), cudaSuccess; }
  cudaError_t stream_query(cudaStream_t) override { return cudaSuccess; }
  cudaError_t event_create(cudaEvent_t* e) override {
    *e = reinterpret_cast<cudaEvent_t>(handle());
    std::lock_guard hold(mutex_);
    events_.push_back(*e);
    return cudaSuccess;
  }
  cudaError_t event_destroy(cudaEvent_t) override { return cudaSuccess; }
  // Logged as "cudaEventRecord start" / "stop": the backend creates its start event first.
  cudaError_t event_record(cudaEvent_t e, cudaStream_t) override {
    std::string which;
    {
      std::lock_guard hold(mutex_);
      which = !events_.empty() && e == events_[0] ? "start" : "stop";
    }
    record("cudaEventRecord " + which);
    return cudaSuccess;
  }
  cudaError_t event_query(cudaEvent_t) override { return cudaSuccess; }
  cudaError_t event_elapsed_ms(float* ms, cudaEvent_t, cudaEvent_t) override {
    *ms = 1.0f;
    return cudaSuccess;
  }
  cudaError_t memset_async(void*, int, std::size_t, cudaStream_t) override { return cudaSuccess; }
  cudaError_t memcpy_to_host_async(void* dst, const void*, std::size_t n, cudaStream_t) override {
    std::memset(dst, 0, n);  // no wrong elements
    return cudaSuccess;
  }
  cudaError_t stream_begin_capture(cudaStream_t) override {
    record("cudaStreamBeginCapture");
    std::lock_guard hold(mutex_);
    capturing_ = true;
    return cudaSuccess;
  }
  cudaError_t stream_end_capture(cudaStream_t, cudaGraph_t* g) override {
    record("cudaStreamEndCapture");
    std::lock_guard hold(mutex_);
    capturing_ = false;
    *g = reinterpret_cast<cudaGraph_t>(handle_locked());
    return cudaSuccess;
  }
  cudaError_t graph_instantiate(cudaGraphExec_t* x, cudaGraph_t) override {
    record("cudaGraphInstantiate");
    *x = reinterpret_cast<cudaGraphExec_t>(handle());
    return cudaSuccess;
  }
  cudaError_t graph_destroy(cudaGraph_t) override { return record("cudaGraphDestroy"), cudaSuccess; }
  cudaError_t graph_exec_destroy(cudaGraphExec_t) override { return record("cudaGraphExecDestroy"), cudaSuccess; }
  cudaError_t graph_launch(cudaGraphExec_t, cudaStream_t) override { return record("cudaGraphLaunch"), cudaSuccess; }
  cudaError_t fill_input(DType, void*, std::uint64_t, Op, const pattern::Params&, int, std::uint64_t,
                         cudaStream_t) override {
    return record("fill_input"), cudaSuccess;
  }
  cudaError_t fill_poison(DType, void*, std::uint64_t, cudaStream_t) override {
    return record("fill_poison"), cudaSuccess;
  }
  cudaError_t count_wrong(DType, const void*, std::uint64_t, Op, const pattern::Params&, int, std::uint64_t,
                          std::uint64_t, bool, unsigned long long*, cudaStream_t) override {
    return record("count_wrong"), cudaSuccess;
  }

  // --- NCCL ---
  // The loaded NCCL's version (2.28.9 unless a test says otherwise).
  void set_version(int version) { version_ = version; }
  ncclResult_t get_version(int* v) override {
    *v = version_;
    return ncclSuccess;
  }
  ncclResult_t get_unique_id(ncclUniqueId* id) override {
    *id = ncclUniqueId{};
    return ncclSuccess;
  }
  const char* nccl_error_string(ncclResult_t) override { return "fake NCCL error"; }
  const char* last_error(ncclComm_t comm) override {
    if (comm != nullptr) use("ncclGetLastError", comm);
    return "";
  }
  ncclResult_t comm_init_rank_config(ncclComm_t* comm, int, const ncclUniqueId&, int, ncclConfig_t* config) override {
    *comm = new_comm(config->blocking != 0);
    record("ncclCommInitRankConfig blocking=" + std::to_string(config->blocking));
    return config->blocking != 0 ? ncclSuccess : ncclInProgress;
  }
  ncclResult_t comm_split(ncclComm_t parent, int, int, ncclComm_t* child, ncclConfig_t* config) override {
    use("ncclCommSplit", parent);
    *child = new_comm(config->blocking != 0);
    record("ncclCommSplit blocking=" + std::to_string(config->blocking));
    return ncclSuccess;
  }
  ncclResult_t comm_get_async_error(ncclComm_t comm, ncclResult_t* state) override {
    use("ncclCommGetAsyncError", comm, /*log=*/false);
    std::lock_guard hold(mutex_);
    *state = hanging_ && !comms_[comm].blocking ? ncclInProgress : ncclSuccess;
    return ncclSuccess;
  }
  ncclResult_t comm_finalize(ncclComm_t comm) override { return use("ncclCommFinalize", comm), ncclSuccess; }
  ncclResult_t comm_destroy(ncclComm_t comm) override { return free_comm("ncclCommDestroy", comm), ncclSuccess; }
  ncclResult_t comm_abort(ncclComm_t comm) override { return free_comm("ncclCommAbort", comm), ncclSuccess; }

  ncclResult_t all_reduce(const void*, void*, std::size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t comm,
                          cudaStream_t) override {
    return op("ncclAllReduce", comm);
  }
  ncclResult_t all_gather(const void*, void*, std::size_t, ncclDataType_t, ncclComm_t comm, cudaStream_t) override {
    return op("ncclAllGather", comm);
  }
  ncclResult_t reduce_scatter(const void*, void*, std::size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t comm,
                              cudaStream_t) override {
    return op("ncclReduceScatter", comm);
  }
  ncclResult_t broadcast(const void*, void*, std::size_t, ncclDataType_t, int, ncclComm_t comm, cudaStream_t) override {
    return op("ncclBroadcast", comm);
  }
  ncclResult_t reduce(const void*, void*, std::size_t, ncclDataType_t, ncclRedOp_t, int root, ncclComm_t comm,
                      cudaStream_t) override {
    return op("ncclReduce root=" + std::to_string(root), comm);
  }
  // The loaded NCCL has ncclGather/ncclScatter (2.28+) unless a test says otherwise.
  void set_gather_scatter(bool present) { gather_scatter_ = present; }
  bool has_gather_scatter(int) override { return gather_scatter_; }
  ncclResult_t gather(const void*, void*, std::size_t, ncclDataType_t, int root, ncclComm_t comm,
                      cudaStream_t) override {
    return op("ncclGather root=" + std::to_string(root), comm);
  }
  ncclResult_t scatter(const void*, void*, std::size_t, ncclDataType_t, int root, ncclComm_t comm,
                       cudaStream_t) override {
    return op("ncclScatter root=" + std::to_string(root), comm);
  }
  bool has_alltoall(int) override { return true; }
  ncclResult_t all_to_all(const void*, void*, std::size_t, ncclDataType_t, ncclComm_t comm, cudaStream_t) override {
    return op("ncclAlltoAll", comm);
  }
  ncclResult_t group_start() override { return record("ncclGroupStart"), ncclSuccess; }
  ncclResult_t group_end() override { return record("ncclGroupEnd"), ncclSuccess; }
  // Logged with the peer, the count and the byte offset from the first buffer the backend allocated
  // for that direction ("ncclSend peer=1 count=16 offset=0"): grouped calls' blocks and alltoallv's
  // per-peer counts.
  ncclResult_t send(const void* buf, std::size_t count, ncclDataType_t, int peer, ncclComm_t comm,
                    cudaStream_t) override {
    return op("ncclSend peer=" + std::to_string(peer) + " count=" + std::to_string(count) +
                  " offset=" + offset_in_allocation(buf),
              comm);
  }
  ncclResult_t recv(void* buf, std::size_t count, ncclDataType_t, int peer, ncclComm_t comm, cudaStream_t) override {
    return op("ncclRecv peer=" + std::to_string(peer) + " count=" + std::to_string(count) +
                  " offset=" + offset_in_allocation(buf),
              comm);
  }

  // -R: the calls exist from the versions the real library has them.
  bool has_comm_register(int v) override { return v >= NCCL_VERSION(2, 19, 0); }
  bool has_windows(int v) override { return v >= NCCL_VERSION(2, 27, 0); }
  ncclResult_t comm_register(ncclComm_t comm, void* buf, std::size_t bytes, void** handle) override {
    use("ncclCommRegister buf=" + buffer_id(buf) + " bytes=" + std::to_string(bytes), comm);
    *handle = buf;  // the buffer is its own handle, so the deregistration names it
    return ncclSuccess;
  }
  ncclResult_t comm_deregister(ncclComm_t comm, void* handle) override {
    return use("ncclCommDeregister buf=" + buffer_id(handle), comm), ncclSuccess;
  }
  ncclResult_t mem_alloc(void** p, std::size_t bytes) override {
    allocate(p, bytes);
    record("ncclMemAlloc buf=" + buffer_id(*p) + " bytes=" + std::to_string(bytes));
    return ncclSuccess;
  }
  ncclResult_t mem_free(void* p) override { return record("ncclMemFree buf=" + buffer_id(p)), ncclSuccess; }
  ncclResult_t window_register(ncclComm_t comm, void* buf, std::size_t bytes, void** window) override {
    use("ncclCommWindowRegister buf=" + buffer_id(buf) + " bytes=" + std::to_string(bytes), comm);
    *window = buf;
    return ncclSuccess;
  }
  ncclResult_t window_deregister(ncclComm_t comm, void* window) override {
    return use("ncclCommWindowDeregister buf=" + buffer_id(window), comm), ncclSuccess;
  }

 private:
  struct Comm {
    bool blocking = true;
    bool live = true;
  };

  void record(const std::string& call) {
    std::lock_guard hold(mutex_);
    calls_.push_back(call);
  }
  std::uintptr_t handle_locked() { return next_handle_ += 0x100; }
  std::uintptr_t handle() {
    std::lock_guard hold(mutex_);
    return handle_locked();
  }
  void allocate(void** p, std::size_t bytes) {
    *p = std::calloc(1, bytes < 64 ? 64 : bytes);
    std::lock_guard hold(mutex_);
    allocations_.push_back(*p);
    sizes_.push_back(bytes < 64 ? 64 : bytes);
  }
  // The number of the allocation that starts at `ptr` ("?" when none does).
  std::string buffer_id(const void* ptr) {
    std::lock_guard hold(mutex_);
    for (std::size_t i = 0; i < allocations_.size(); ++i) {
      if (allocations_[i] == ptr) return std::to_string(i);
    }
    return "?";
  }
  // The byte offset of `ptr` in the allocation that holds it ("?" when none does).
  std::string offset_in_allocation(const void* ptr) {
    std::lock_guard hold(mutex_);
    const auto* at = static_cast<const char*>(ptr);
    for (std::size_t i = 0; i < allocations_.size(); ++i) {
      const auto* base = static_cast<const char*>(allocations_[i]);
      if (at >= base && at < base + sizes_[i]) return std::to_string(at - base);
    }
    return "?";
  }
  ncclComm_t new_comm(bool blocking) {
    std::lock_guard hold(mutex_);
    auto comm = reinterpret_cast<ncclComm_t>(handle_locked());
    comms_[comm] = Comm{blocking, true};
    return comm;
  }
  // Logs `call` (unless !log) and a use after free when `comm` is not live.
  void use(const std::string& call, ncclComm_t comm, bool log = true) {
    std::lock_guard hold(mutex_);
    const auto it = comms_.find(comm);
    if (it == comms_.end() || !it->second.live) calls_.push_back("USE-AFTER-FREE " + call);
    if (log) calls_.push_back(call);
  }
  void free_comm(const std::string& call, ncclComm_t comm) {
    use(call, comm);
    std::lock_guard hold(mutex_);
    comms_[comm].live = false;
  }
  // A collective: "ncclAllReduce blocking=1" (" capturing" inside a capture). When ops hang, a
  // blocking communicator waits for release_ops(); a nonblocking one returns ncclInProgress and
  // keeps reporting it from ncclCommGetAsyncError.
  ncclResult_t op(const std::string& name, ncclComm_t comm) {
    use(name, comm, /*log=*/false);
    std::unique_lock hold(mutex_);
    const bool blocking = comms_[comm].blocking;
    calls_.push_back(name + " blocking=" + (blocking ? "1" : "0") + (capturing_ ? " capturing" : ""));
    if (op_result_ != ncclSuccess) return op_result_;
    if (!hanging_) return ncclSuccess;
    if (!blocking) return ncclInProgress;
    released_.wait(hold, [&] { return !hanging_; });
    calls_.push_back(name + " returned");
    return ncclSuccess;
  }

  mutable std::mutex mutex_;
  std::condition_variable released_;
  std::vector<std::string> calls_;
  std::map<ncclComm_t, Comm> comms_;
  std::vector<cudaEvent_t> events_;
  std::vector<void*> allocations_;
  std::vector<std::size_t> sizes_;
  bool gather_scatter_ = true;
  int version_ = NCCL_VERSION(2, 28, 9);
  std::uintptr_t next_handle_ = 0x10000;
  bool hanging_ = false;
  ncclResult_t op_result_ = ncclSuccess;
  bool capturing_ = false;
};

}  // namespace ccbench::nccl::testing
