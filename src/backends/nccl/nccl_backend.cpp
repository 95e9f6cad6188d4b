#include "backends/nccl/nccl_backend.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "backends/nccl/efa_counters.hpp"
#include "backends/nccl/grouped_calls.hpp"
#include "backends/nccl/nccl_api.hpp"
#include "backends/nccl/nccl_comm.hpp"
#include "backends/nccl/nccl_log_parse.hpp"
#include "backends/nccl/nccl_log_tee.hpp"
#include "backends/nccl/nccl_types.hpp"
#include "backends/point_to_point.hpp"
#include "core/error.hpp"
#include "core/message_pattern.hpp"
#include "sweep/channel.hpp"

namespace ccbench {
namespace {

// How long abort() (the watchdog thread) waits for the measuring thread to leave its current call
// before it gives up freeing the communicator; the process ends right after.
constexpr double kAbortWaitS = 2.0;

std::string cuda_version_string(int v) {
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string hostname() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

std::string env_or(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

template <std::size_t N>
void copy_text(char (&dst)[N], std::string_view src) {
  const std::size_t n = std::min(N - 1, src.size());
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

// What each rank tells the others at setup, gathered and broadcast over the control channel: whether its GPU is usable
// and which GPU it is (for the duplicate check and the result file).
struct RankRecord {
  char host[128];
  char bus_id[32];
  char gpu[96];
  char visible[64];  // CUDA_VISIBLE_DEVICES
  char error[384];   // empty when the GPU is usable
  std::uint64_t memory_bytes;
  int device;
  int cc_major;
  int cc_minor;
  int local_rank;
};

struct UniqueIdMessage {
  ncclUniqueId id;
  char error[384];
};

// Where a case's input lives and where its result lands, in elements of the backend's buffers,
// following NCCL's in-place conventions (allgather, gather: sendbuff = recvbuff + rank*count;
// reduce_scatter, scatter: recvbuff = sendbuff + rank*recvcount; broadcast on the root, reduce:
// sendbuff = recvbuff). Rooted ops read only the root's input (broadcast, scatter) or leave a result
// on the root only (gather, reduce): the other ranks have nothing to check.
struct Placement {
  bool input_in_recv;
  std::uint64_t input_offset;
  std::uint64_t input_elements;
  std::uint64_t output_offset;  // within recv
  std::uint64_t output_elements;
  std::uint64_t recv_span;  // elements of recv the case touches (poisoned before the op)
};

Placement placement(const CaseSpec& c) {
  const auto& l = c.layout;
  const auto rank = static_cast<std::uint64_t>(c.rank);
  Placement p{c.in_place,      0,
              l.send_elements, 0,
              l.recv_elements, c.in_place ? std::max(l.send_elements, l.recv_elements) : l.recv_elements};
  const bool root = c.rank == c.root;
  if (c.in_place && (c.op == Op::allgather || c.op == Op::gather)) p.input_offset = rank * l.count;
  if (c.in_place && (c.op == Op::reduce_scatter || c.op == Op::scatter)) p.output_offset = rank * l.count;
  if ((c.op == Op::broadcast || c.op == Op::scatter) && !root) p.input_elements = 0;
  if ((c.op == Op::gather || c.op == Op::reduce) && !root) p.output_elements = 0;
  return p;
}

std::string describe(const CaseSpec& c) {
  std::string text =
      std::string(name(c.op)) + " of " + std::to_string(c.layout.bytes) + " bytes (" + std::string(name(c.dtype));
  if (info(c.op).is_reduction) text += ", " + std::string(name(c.redop));
  if (is_rooted(c.op)) text += ", root " + std::to_string(c.root);
  return text + (c.in_place ? ", in-place)" : ", out-of-place)");
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class NcclBackend final : public Backend, public PointToPoint {
 public:
  NcclBackend(const BackendOptions& options, nccl::NcclApi& api, std::function<void()> on_aborted);
  ~NcclBackend() override;
  NcclBackend(const NcclBackend&) = delete;
  NcclBackend& operator=(const NcclBackend&) = delete;

  std::string_view name() const override { return "nccl"; }
  std::string_view clock() const override { return "cudaEvent"; }
  std::optional<std::string> unsupported(const CaseSpec& c) const override;
  std::uint64_t memory_budget_bytes(int ranks_on_node) const override;
  void allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) override;
  void fill(const CaseSpec& c, const pattern::Params& p) override;
  void launch(const CaseSpec& c) override { enqueue(c); }
  void synchronize() override { wait_stream(nullptr); }
  double time_batch_us(const CaseSpec& c, int batch) override;
  std::uint64_t verify(const CaseSpec& c, const pattern::Params& p) override;
  void corrupt_output_for_test(const CaseSpec& c) override;
  void abort() noexcept override { comm_.abort_within(kAbortWaitS); }
  nlohmann::json metadata() const override;
  nlohmann::json final_metadata() override;
  // replay's sends and receives (docs/replay.md): a batch is one ncclGroupStart/End group.
  double time_point_to_point_us(std::span<const PointToPointCall> batch) override;
  void fill_point_to_point(std::span<const PointToPointCall> batch, int self, const pattern::Params& p) override;
  std::vector<std::uint64_t> verify_point_to_point(std::span<const PointToPointCall> batch, int self,
                                                   const pattern::Params& p) override;

 private:
  void setup_environment();
  void release() noexcept;
  // -R: UsageError naming the flag and the loaded NCCL when it lacks the calls (every rank alike).
  void check_registration_support() const;
  // The buffer as -R wants it: cudaMalloc (0, 1) or ncclMemAlloc (2), registered (1, 2).
  void allocate_buffer(void*& buffer, std::uint64_t bytes, const char* what);
  void free_buffer(void* buffer) noexcept;
  // Runs an NCCL call on the (blocking) communicator; throws with the case's description on an error.
  // A matrix op's alltoallv (backends/backend.hpp, CaseSpec::matrix): grouped ncclSend/ncclRecv.
  void enqueue_matrix(const CaseSpec& c, const AlltoallvCounts& counts, const void* send, void* recv);
  void nccl_call(const CaseSpec* c, const char* what, const std::function<ncclResult_t(ncclComm_t)>& call);
  [[noreturn]] void nccl_fail(const CaseSpec* c, const char* what, ncclResult_t result);
  void check_cuda(cudaError_t e, const CaseSpec* c, const char* what) const;
  std::string cuda_error(cudaError_t e) const { return api_.error_string(e); }
  // Polls until the stream (or event) completes, checking NCCL's async error between polls.
  void wait_stream(const CaseSpec* c) { wait_event(nullptr, c); }
  void wait_event(cudaEvent_t event, const CaseSpec* c);
  void check_async(const CaseSpec* c);
  void enqueue(const CaseSpec& c);
  // sendrecv, and gather/scatter without ncclGather/ncclScatter: ncclSend/ncclRecv in one group.
  void enqueue_grouped(const CaseSpec& c, const void* send, void* recv);
  // sendrecv --pattern / --block-bytes: every block of the pattern's messages in one group.
  void enqueue_blocks(const CaseSpec& c, const void* send, void* recv);
  const PatternPeers& peers_of(const CaseSpec& c);
  // -G: the case's graph, captured and instantiated in set-up (fill), never inside a timed region.
  void prepare_graph(const CaseSpec& c);
  // One small allreduce at set-up, so NCCL connects (and logs its transports) before metadata().
  void connect_once();
  void* input_ptr(const CaseSpec& c, const Placement& p) const;
  char* recv_at(const CaseSpec& c, std::uint64_t element) const {
    return static_cast<char*>(recv_) + element * info(c.dtype).size_bytes;
  }

  nccl::NcclApi& api_;
  nccl::Communicator comm_;
  BackendOptions options_;
  ControlChannel& channel_;  // set-up exchanges and the final gather; never MPI directly
  std::string path_;         // nvlink | efa | all
  int rank_ = 0;             // in the job's control channel (the NCCL log, EFA counters, the final gather)
  int nranks_ = 1;
  // The NCCL communicator's ranks: the job's, or this rank's group (BackendOptions::group_color).
  int comm_rank_ = 0;
  int comm_size_ = 1;
  std::unique_ptr<ControlChannel> group_channel_;  // --groups: the unique id goes over this
  int nodes_ = 1;
  int device_ = 0;
  int cc_major_ = 0;
  int cc_minor_ = 0;
  int nccl_runtime_version_ = 0;
  bool has_alltoall_ = false;
  bool has_gather_scatter_ = false;  // ncclGather/ncclScatter (2.28+), else grouped send/recv
  double init_timeout_s_ = 0;

  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  unsigned long long* d_wrong_ = nullptr;
  unsigned long long* h_wrong_ = nullptr;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  std::uint64_t send_capacity_ = 0;
  std::uint64_t recv_capacity_ = 0;
  PatternPeers peers_;  // of peers_for_ (pattern, group, rank, ranks): made once per case, not per op
  std::optional<std::tuple<SendRecvPattern, int, int, int>> peers_for_;

  // The case the communicator's graph (-G) was captured for.
  struct GraphKey {
    Op op;
    DType dtype;
    RedOp redop;
    bool in_place;
    int root;
    std::uint64_t count;
    bool operator==(const GraphKey&) const = default;
  };
  std::optional<GraphKey> graph_key_;

  // What was learnt at setup for metadata().
  nlohmann::json gpus_ = nlohmann::json::array();
  std::map<std::string, std::string> env_set_;  // variables this backend set
  std::string nccl_log_path_;                   // NCCL_DEBUG_FILE we read (ours or the user's)
  bool own_log_ = false;                        // the file is ours (removed at the end)
  std::unique_ptr<nccl::LogTee> tee_;           // echoes our file to stdout when the user's INFO went there
  nccl::NcclLogInfo log_;
  nccl::PathEnv path_env_;
  std::vector<std::string> net_plugin_libraries_;
  nccl::EfaCounters efa_start_;
  bool efa_reader_ = false;  // first rank of its node: reads the node's counters
};

// Every rank's `mine` on every rank, in rank order, over the control channel (a gather to rank 0
// and a broadcast of the table). For plain structs only.
template <typename T>
std::vector<T> all_gather(ControlChannel& channel, const T& mine) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::string table;
  for (const auto& bytes : channel.gather_to_root(std::string(reinterpret_cast<const char*>(&mine), sizeof mine))) {
    table += bytes;
  }
  table = channel.broadcast(table);
  std::vector<T> all(static_cast<std::size_t>(channel.size()));
  if (table.size() != sizeof mine * all.size()) throw BackendError("--backend nccl: the GPU table is incomplete");
  std::memcpy(static_cast<void*>(all.data()), table.data(), table.size());
  return all;
}

ControlChannel& require_channel(const BackendOptions& options) {
  if (options.channel == nullptr) throw BackendError("--backend nccl: no control channel between the ranks");
  return *options.channel;
}

NcclBackend::NcclBackend(const BackendOptions& options, nccl::NcclApi& api, std::function<void()> on_aborted)
    : api_(api), comm_(api, std::move(on_aborted)), options_(options), channel_(require_channel(options)) {
  path_ = ccbench::name(nccl_path_flag(options.path.empty() ? ccbench::name(NcclPath::all) : options.path));
  if (options.graph_launches < 0 || options.graph_launches > 4096) {
    throw UsageError("-G/--cudagraph: expected 0..4096 ops per graph, got " + std::to_string(options.graph_launches));
  }
  rank_ = channel_.rank();
  nranks_ = channel_.size();
  comm_rank_ = rank_;
  comm_size_ = nranks_;

  // Everything before the first NCCL call: NCCL reads its environment once.
  setup_environment();

  RankRecord mine{};
  copy_text(mine.host, hostname());
  copy_text(mine.visible, env_or("CUDA_VISIBLE_DEVICES", "(unset)"));
  mine.local_rank = options.local_rank;
  mine.device = -1;
  try {
    // Local checks throw here and are shared below, so every rank fails together.
    init_timeout_s_ = nccl::init_timeout_s(std::getenv("CCBENCH_NCCL_INIT_TIMEOUT"), options.setup_watchdog_s);
    if (path_ == "nvlink" && path_env_.p2p_disabled) {
      throw UsageError("--path nvlink: NCCL_P2P_DISABLE=1 in the environment forbids NVLink peer-to-peer");
    }
    int count = 0;
    const cudaError_t e = api_.get_device_count(&count);
    if (e != cudaSuccess || count == 0) {
      std::string why = e != cudaSuccess ? cuda_error(e) : std::string("0 devices");
      int driver = 0;
      if (e == cudaErrorInsufficientDriver && api_.driver_get_version(&driver) == cudaSuccess && driver == 0) {
        why += "; no NVIDIA driver is loaded";
      }
      throw UsageError("no CUDA device visible (cudaGetDeviceCount: " + why + ")");
    }
    device_ = options.local_rank % count;
    mine.device = device_;
    check_cuda(api_.set_device(device_), nullptr, "cudaSetDevice");
    nccl::DeviceInfo dev;
    check_cuda(api_.device_info(device_, &dev), nullptr, "cudaGetDeviceProperties");
    cc_major_ = dev.cc_major;
    cc_minor_ = dev.cc_minor;
    mine.cc_major = dev.cc_major;
    mine.cc_minor = dev.cc_minor;
    mine.memory_bytes = dev.memory_bytes;
    copy_text(mine.gpu, dev.name);
    copy_text(mine.bus_id, dev.pci_bus_id);
    check_cuda(api_.stream_create(&stream_), nullptr, "cudaStreamCreate");
    check_cuda(api_.event_create(&start_), nullptr, "cudaEventCreate");
    check_cuda(api_.event_create(&stop_), nullptr, "cudaEventCreate");
    check_cuda(api_.malloc_device(reinterpret_cast<void**>(&d_wrong_), sizeof *d_wrong_), nullptr, "cudaMalloc");
    check_cuda(api_.malloc_host(reinterpret_cast<void**>(&h_wrong_), sizeof *h_wrong_), nullptr, "cudaMallocHost");
  } catch (const std::exception& e) {
    copy_text(mine.error, e.what());
  }

  // Every rank learns every rank's state, so all of them fail together (nobody is left waiting in a
  // collective) and the duplicate-GPU check sees the whole job.
  std::vector<RankRecord> all;
  try {
    all = all_gather(channel_, mine);
  } catch (...) {
    release();
    throw;
  }
  try {
    std::map<std::string, int> ranks_on_host;
    std::map<std::string, int> owner;  // host + bus id -> rank
    for (int r = 0; r < nranks_; ++r) {
      const RankRecord& rec = all[static_cast<std::size_t>(r)];
      if (rec.error[0] != '\0') {
        const RankRecord& shown = mine.error[0] != '\0' ? mine : rec;
        const int who = mine.error[0] != '\0' ? rank_ : r;
        std::string where = nranks_ > 1 ? " (rank " + std::to_string(who) + " on " + shown.host + ")" : "";
        throw UsageError("--backend nccl: " + std::string(shown.error) + where);
      }
      ++ranks_on_host[rec.host];
      const std::string key = std::string(rec.host) + " " + rec.bus_id;
      if (const auto it = owner.find(key); it != owner.end()) {
        throw UsageError("--backend nccl: ranks " + std::to_string(it->second) + " and " + std::to_string(r) + " on " +
                         rec.host + " both use GPU " + rec.bus_id +
                         "; NCCL needs one GPU per rank (launch at most as many ranks per node as GPUs, "
                         "CUDA_VISIBLE_DEVICES=" +
                         rec.visible + ")");
      }
      owner[key] = r;
      gpus_.push_back({{"rank", r},
                       {"host", rec.host},
                       {"device", rec.device},
                       {"name", rec.gpu},
                       {"memory_bytes", rec.memory_bytes},
                       {"pci_bus_id", rec.bus_id},
                       {"compute_capability", std::to_string(rec.cc_major) + "." + std::to_string(rec.cc_minor)},
                       {"cuda_visible_devices", rec.visible}});
    }
    nodes_ = static_cast<int>(ranks_on_host.size());
    if (path_ == "nvlink" && nodes_ > 1) {
      throw UsageError("--path nvlink measures inside one node, but the ranks span " + std::to_string(nodes_) +
                       " nodes (use --path efa or --path all)");
    }
    // The first rank of each host reads that host's EFA counters.
    efa_reader_ = true;
    for (int r = 0; r < rank_; ++r) {
      if (std::strcmp(all[static_cast<std::size_t>(r)].host, mine.host) == 0) efa_reader_ = false;
    }

    api_.get_version(&nccl_runtime_version_);
    has_alltoall_ = api_.has_alltoall(nccl_runtime_version_);
    has_gather_scatter_ = api_.has_gather_scatter(nccl_runtime_version_);
    check_registration_support();

    // --groups: one communicator per group. The group's rank 0 makes its unique id and sends it to
    // the group over a split of the control channel; the GPU stays the node's (local_rank).
    ControlChannel* id_channel = &channel_;
    if (options.group_color >= 0) {
      group_channel_ = channel_.split(options.group_color);
      id_channel = group_channel_.get();
      comm_rank_ = group_channel_->rank();
      comm_size_ = group_channel_->size();
    }
    UniqueIdMessage message{};
    if (comm_rank_ == 0) {
      const ncclResult_t r = api_.get_unique_id(&message.id);
      if (r != ncclSuccess) {
        copy_text(message.error,
                  std::string("ncclGetUniqueId: ") + api_.nccl_error_string(r) + " " + api_.last_error(nullptr));
      }
    }
    const std::string sent =
        id_channel->broadcast(std::string(reinterpret_cast<const char*>(&message), sizeof message));
    if (sent.size() != sizeof message) throw BackendError("--backend nccl: the NCCL unique id did not arrive");
    std::memcpy(static_cast<void*>(&message), sent.data(), sizeof message);
    if (message.error[0] != '\0') throw BackendError("--backend nccl: " + std::string(message.error));

    try {
      comm_.init(message.id, comm_size_, comm_rank_, init_timeout_s_);
    } catch (const BackendError& e) {
      std::string text = e.what();
      if (!nccl_log_path_.empty()) text += " (NCCL log: " + nccl_log_path_ + ")";
      throw BackendError(text);
    }
    connect_once();
  } catch (...) {
    release();
    throw;
  }

  // What NCCL said about itself during init and the first connection (rank 0 writes the result file).
  if (!nccl_log_path_.empty()) log_ = nccl::parse_nccl_log(read_file(nccl_log_path_));
  net_plugin_libraries_ = nccl::mapped_libraries(read_file("/proc/self/maps"), "libnccl-net");
  if (efa_reader_) efa_start_ = nccl::read_efa_counters();
}

NcclBackend::~NcclBackend() {
  comm_.close();  // its graphs first, then the communicator
  release();
  tee_.reset();  // the last of NCCL's lines to stdout
  if (own_log_ && !nccl_log_path_.empty()) {
    std::error_code ec;
    std::filesystem::remove(nccl_log_path_, ec);
  }
}

void NcclBackend::release() noexcept {
  comm_.destroy_graph();
  free_buffer(send_);
  free_buffer(recv_);
  if (d_wrong_ != nullptr) api_.free_device(d_wrong_);
  if (h_wrong_ != nullptr) api_.free_host(h_wrong_);
  if (start_ != nullptr) api_.event_destroy(start_);
  if (stop_ != nullptr) api_.event_destroy(stop_);
  if (stream_ != nullptr) api_.stream_destroy(stream_);
  send_ = recv_ = nullptr;
  d_wrong_ = h_wrong_ = nullptr;
  start_ = stop_ = nullptr;
  stream_ = nullptr;
  send_capacity_ = recv_capacity_ = 0;
}

void NcclBackend::setup_environment() {
  // --path efa: no NVLink/PCIe peer-to-peer and no shared memory, so every byte takes the network.
  if (path_ == "efa") {
    for (const char* var : {"NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE"}) {
      ::setenv(var, "1", 1);
      env_set_[var] = "1";
    }
  }
  // What NCCL will be allowed, as NCCL reads it: the user's variables or ours.
  path_env_.p2p_disabled = nccl::env_flag_set(std::getenv("NCCL_P2P_DISABLE"));
  path_env_.shm_disabled = nccl::env_flag_set(std::getenv("NCCL_SHM_DISABLE"));
  // NCCL's INFO output names the transports it connected, the net plugin and the provider. Rank 0
  // (which writes the result file) reads it from a file; where the user's setting sends it to
  // stdout, the file is echoed there, so the user sees what they asked for.
  if (rank_ != 0) return;
  const std::string own = env_or("TMPDIR", "/tmp") + "/ccbench-nccl-" + std::to_string(::getpid()) + ".log";
  const nccl::LogPlan plan =
      nccl::plan_nccl_log(env_or("NCCL_DEBUG"), env_or("NCCL_DEBUG_FILE"), own, hostname(), ::getpid());
  nccl_log_path_ = plan.read_path;
  own_log_ = plan.set_file;
  if (plan.set_level) {
    ::setenv("NCCL_DEBUG", "INFO", 1);
    env_set_["NCCL_DEBUG"] = "INFO";
  }
  if (plan.set_file) {
    ::setenv("NCCL_DEBUG_FILE", plan.read_path.c_str(), 1);
    env_set_["NCCL_DEBUG_FILE"] = plan.read_path;
  }
  if (plan.echo_to_stdout) tee_ = std::make_unique<nccl::LogTee>(plan.read_path, stdout);
}

void NcclBackend::connect_once() {
  // A 1-byte allreduce connects the ring NCCL uses (logging "Channel ... via P2P/..., NET/...") so
  // the fabric path comes from what NCCL connected. Set-up only: nothing is timed here.
  nccl_call(nullptr, "ncclAllReduce (connect)",
            [&](ncclComm_t comm) { return api_.all_reduce(d_wrong_, d_wrong_, 1, ncclUint8, ncclMax, comm, stream_); });
  wait_stream(nullptr);
}

void NcclBackend::check_cuda(cudaError_t e, const CaseSpec* c, const char* what) const {
  if (e == cudaSuccess) return;
  throw BackendError((c != nullptr ? describe(*c) + ": " : std::string()) + what + ": " + cuda_error(e));
}

void NcclBackend::nccl_fail(const CaseSpec* c, const char* what, ncclResult_t result) {
  comm_.mark_failed();
  const nccl::ErrorClass error = nccl::classify_error(result);
  std::string text =
      (c != nullptr ? describe(*c) + ": " : std::string()) + what + ": " + api_.nccl_error_string(result);
  if (const std::string last = comm_.last_error(); !last.empty()) text += " (" + last + ")";
  text += "; " + error.cause;
  if (!nccl_log_path_.empty()) text += " (NCCL log: " + nccl_log_path_ + ")";
  if (error.side == nccl::ErrorSide::peer) throw PeerFailure(text);
  throw BackendError(text);
}

void NcclBackend::nccl_call(const CaseSpec* c, const char* what, const std::function<ncclResult_t(ncclComm_t)>& call) {
  // Blocking communicator: the call returns when the op is enqueued.
  const ncclResult_t r = comm_.use(call);
  if (r != ncclSuccess) nccl_fail(c, what, r);
}

void NcclBackend::check_async(const CaseSpec* c) {
  ncclResult_t state = ncclSuccess;
  const ncclResult_t r = comm_.async_error(&state);
  if (r != ncclSuccess) nccl_fail(c, "ncclCommGetAsyncError", r);
  if (state != ncclSuccess && state != ncclInProgress) nccl_fail(c, "NCCL reported an asynchronous error", state);
}

void NcclBackend::wait_event(cudaEvent_t event, const CaseSpec* c) {
  // Polling instead of cudaEventSynchronize: NCCL's async errors (a dead peer, a network error)
  // surface here instead of a wait that never returns.
  for (unsigned spin = 0;; ++spin) {
    const cudaError_t e = event != nullptr ? api_.event_query(event) : api_.stream_query(stream_);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) check_cuda(e, c, event != nullptr ? "cudaEventQuery" : "cudaStreamQuery");
    check_async(c);
    if (spin < 2000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

std::optional<std::string> NcclBackend::unsupported(const CaseSpec& c) const {
  if (!info(c.op).is_collective()) return "the nccl backend runs collectives only";
  if (c.op == Op::alltoall && c.in_place) return "NCCL has no in-place alltoall (send and receive buffers must differ)";
  if (c.op == Op::sendrecv && c.in_place) return "sendrecv has no in-place form (send and receive buffers must differ)";
  if (!nccl::data_type(c.dtype)) {
    return "this ccbench was built against NCCL " + nccl::version_string(NCCL_VERSION_CODE) + ", which has no " +
           std::string(ccbench::name(c.dtype)) + " (fp8 needs NCCL 2.24+)";
  }
  if (nccl_runtime_version_ < nccl::min_version_for(c.dtype)) {
    return "the loaded NCCL " + nccl::version_string(nccl_runtime_version_) + " has no " +
           std::string(ccbench::name(c.dtype)) + " (needs " + nccl::version_string(nccl::min_version_for(c.dtype)) +
           ")";
  }
  if ((c.dtype == DType::fp8_e4m3 || c.dtype == DType::fp8_e5m2) && cc_major_ < 9) {
    return "NCCL's fp8 types need compute capability 9.0 or newer (this GPU is " + std::to_string(cc_major_) + "." +
           std::to_string(cc_minor_) + ")";
  }
  if (info(c.op).is_reduction && !nccl::red_op(c.redop)) {
    return "NCCL has no " + std::string(ccbench::name(c.redop)) + " reduction";
  }
  if (info(c.op).is_reduction && c.redop == RedOp::avg) return nccl::avg_fixed_result(c.dtype, c.nranks);
  if (info(c.op).buffers == OpBuffers::matrix) return matrix_unsupported(c, std::numeric_limits<std::size_t>::max());
  return std::nullopt;
}

std::uint64_t NcclBackend::memory_budget_bytes(int) const {
  // One GPU per rank: the budget is this GPU's free memory, less a margin for what NCCL allocates
  // lazily at the first op of each kind (channel buffers, NVLS, CUDA graphs).
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  if (api_.mem_get_info(&free_bytes, &total_bytes) != cudaSuccess) return 0;
  const std::uint64_t margin = std::max<std::uint64_t>(total_bytes / 32, 512ull << 20);
  return free_bytes > margin ? free_bytes - margin : 1;
}

void NcclBackend::allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) {
  recv_bytes = std::max<std::uint64_t>(recv_bytes, 1);
  if (options_.registration == BufferRegistration::symmetric_window) {
    // Window registration is collective with the same size on every rank of the communicator: the
    // largest of the ranks' sizes, in NCCL's window alignment.
    struct Sizes {
      std::uint64_t send, recv;
    };
    ControlChannel& comm_channel = group_channel_ ? *group_channel_ : channel_;
    constexpr std::uint64_t align = nccl::kWindowAlignmentBytes;
    const auto round_up = [](std::uint64_t b) { return (b + align - 1) / align * align; };
    const Sizes mine{send_bytes, recv_bytes};
    send_bytes = recv_bytes = align;
    for (const Sizes& s : all_gather(comm_channel, mine)) {
      send_bytes = std::max(send_bytes, round_up(s.send));
      recv_bytes = std::max(recv_bytes, round_up(s.recv));
    }
  }
  auto reserve = [&](void*& buffer, std::uint64_t& capacity, std::uint64_t bytes, const char* what) {
    if (bytes <= capacity) return;
    // A graph captured the old buffers' addresses.
    comm_.destroy_graph();
    graph_key_.reset();
    free_buffer(buffer);
    buffer = nullptr;
    capacity = 0;
    allocate_buffer(buffer, bytes, what);
    capacity = bytes;
  };
  reserve(send_, send_capacity_, send_bytes, "send");
  reserve(recv_, recv_capacity_, recv_bytes, "receive");
}

void NcclBackend::allocate_buffer(void*& buffer, std::uint64_t bytes, const char* what) {
  const BufferRegistration mode = options_.registration;
  if (mode == BufferRegistration::symmetric_window) {
    if (const ncclResult_t r = api_.mem_alloc(&buffer, bytes); r != ncclSuccess) {
      buffer = nullptr;
      throw BackendError(std::string("ncclMemAlloc of the ") + what + " buffer (" + std::to_string(bytes) +
                         " bytes, -R 2): " + api_.nccl_error_string(r));
    }
  } else if (const cudaError_t e = api_.malloc_device(&buffer, bytes); e != cudaSuccess) {
    buffer = nullptr;
    throw BackendError(std::string("cudaMalloc of the ") + what + " buffer (" + std::to_string(bytes) +
                       " bytes): " + cuda_error(e));
  }
  if (mode == BufferRegistration::none) return;
  // Once per buffer and size, outside every timed region (nccl-tests registers at allocation too).
  const ncclResult_t r = comm_.register_buffer(buffer, bytes, mode);
  if (r != ncclSuccess) {
    const std::string call =
        std::string(mode == BufferRegistration::comm_register ? "ncclCommRegister" : "ncclCommWindowRegister") +
        " of the " + what + " buffer (" + std::to_string(bytes) + " bytes, -R/--register)";
    nccl_fail(nullptr, call.c_str(), r);
  }
}

void NcclBackend::free_buffer(void* buffer) noexcept {
  if (buffer == nullptr) return;
  comm_.deregister(buffer);  // NCCL wants the registration gone before the memory
  if (options_.registration == BufferRegistration::symmetric_window) {
    api_.mem_free(buffer);
  } else {
    api_.free_device(buffer);
  }
}

void NcclBackend::check_registration_support() const {
  const std::string loaded = "the loaded NCCL is " + nccl::version_string(nccl_runtime_version_);
  if (options_.registration == BufferRegistration::comm_register && !api_.has_comm_register(nccl_runtime_version_)) {
    throw UsageError("-R/--register 1: ncclCommRegister needs NCCL 2.19 or newer; " + loaded);
  }
  if (options_.registration == BufferRegistration::symmetric_window && !api_.has_windows(nccl_runtime_version_)) {
    throw UsageError("-R/--register 2: symmetric windows (ncclCommWindowRegister) need NCCL 2.27 or newer; " + loaded);
  }
}

void* NcclBackend::input_ptr(const CaseSpec& c, const Placement& p) const {
  if (p.input_in_recv) return recv_at(c, p.input_offset);
  return send_;
}

void NcclBackend::fill(const CaseSpec& c, const pattern::Params& p) {
  // The engine fills every case before its check, warm-up and samples: the case's set-up. The graph
  // first, since its eager op writes the buffers the fill then sets.
  if (options_.graph_launches > 0) prepare_graph(c);
  const Placement place = placement(c);
  check_cuda(api_.fill_poison(c.dtype, recv_, place.recv_span, stream_), &c, "poison kernel");
  check_cuda(api_.fill_input(c.dtype, input_ptr(c, place), place.input_elements, c.op, p, c.rank, 0, stream_), &c,
             "fill kernel");
  wait_stream(&c);
}

void NcclBackend::enqueue(const CaseSpec& c) {
  const ncclDataType_t type = *nccl::data_type(c.dtype);
  const ncclRedOp_t op = info(c.op).is_reduction ? *nccl::red_op(c.redop) : ncclSum;
  const Placement place = placement(c);
  const std::size_t count = c.layout.count;
  // NCCL's in-place forms: the send pointer inside the receive buffer.
  const void* send = c.in_place ? recv_at(c, place.input_offset) : send_;
  void* recv = recv_;
  cudaStream_t stream = stream_;
  switch (c.op) {
    case Op::allreduce:
      nccl_call(&c, "ncclAllReduce",
                [&](ncclComm_t comm) { return api_.all_reduce(send, recv, count, type, op, comm, stream); });
      break;
    case Op::allgather:
      nccl_call(&c, "ncclAllGather",
                [&](ncclComm_t comm) { return api_.all_gather(send, recv, count, type, comm, stream); });
      break;
    case Op::reduce_scatter:
      if (c.in_place) recv = recv_at(c, place.output_offset);
      nccl_call(&c, "ncclReduceScatter",
                [&](ncclComm_t comm) { return api_.reduce_scatter(send, recv, count, type, op, comm, stream); });
      break;
    case Op::broadcast:
      nccl_call(&c, "ncclBroadcast",
                [&](ncclComm_t comm) { return api_.broadcast(send, recv, count, type, c.root, comm, stream); });
      break;
    case Op::reduce:
      nccl_call(&c, "ncclReduce",
                [&](ncclComm_t comm) { return api_.reduce(send, recv, count, type, op, c.root, comm, stream); });
      break;
    case Op::gather:
      if (has_gather_scatter_) {
        nccl_call(&c, "ncclGather",
                  [&](ncclComm_t comm) { return api_.gather(send, recv, count, type, c.root, comm, stream); });
        break;
      }
      enqueue_grouped(c, send, recv);
      break;
    case Op::scatter:
      recv = recv_at(c, place.output_offset);
      if (has_gather_scatter_) {
        nccl_call(&c, "ncclScatter",
                  [&](ncclComm_t comm) { return api_.scatter(send, recv, count, type, c.root, comm, stream); });
        break;
      }
      enqueue_grouped(c, send, recv);
      break;
    case Op::sendrecv:
      if (c.posts_blocks()) {
        enqueue_blocks(c, send, recv);
        break;
      }
      enqueue_grouped(c, send, recv);
      break;
    case Op::alltoall:
      if (has_alltoall_) {
        nccl_call(&c, "ncclAlltoAll",
                  [&](ncclComm_t comm) { return api_.all_to_all(send, recv, count, type, comm, stream); });
        break;
      }
      nccl_call(&c, "grouped ncclSend/ncclRecv", [&](ncclComm_t comm) {
        const std::size_t block = count * info(c.dtype).size_bytes;
        ncclResult_t first_error = api_.group_start();
        for (int peer = 0; peer < comm_size_ && first_error == ncclSuccess; ++peer) {
          const auto offset = static_cast<std::size_t>(peer) * block;
          first_error = api_.send(static_cast<const char*>(send) + offset, count, type, peer, comm, stream);
          if (first_error == ncclSuccess) {
            first_error = api_.recv(static_cast<char*>(recv) + offset, count, type, peer, comm, stream);
          }
        }
        const ncclResult_t end = api_.group_end();
        return first_error != ncclSuccess ? first_error : end;
      });
      break;
    case Op::alltoallv:
    case Op::moe_dispatch:
    case Op::moe_combine:
    case Op::moe_pair:
      enqueue_matrix(c, c.matrix->counts, send, recv);
      if (c.op == Op::moe_pair) {  // the combine: the dispatch's output goes back
        const std::size_t elt = info(c.dtype).size_bytes;
        enqueue_matrix(c, c.matrix->combine, recv, static_cast<char*>(recv) + c.matrix->counts.recv_elements * elt);
      }
      break;
    default:
      throw BackendError("the nccl backend cannot run " + std::string(ccbench::name(c.op)));
  }
}

void NcclBackend::enqueue_grouped(const CaseSpec& c, const void* send, void* recv) {
  const ncclDataType_t type = *nccl::data_type(c.dtype);
  const std::size_t count = c.layout.count;
  const std::size_t element_bytes = info(c.dtype).size_bytes;
  nccl_call(&c, "grouped ncclSend/ncclRecv", [&](ncclComm_t comm) {
    ncclResult_t first_error = api_.group_start();
    nccl::for_each_grouped_call(
        c.op, comm_rank_, comm_size_, c.root, c.in_place, count, [&](const nccl::GroupedCall& call) {
          if (first_error != ncclSuccess) return;
          const std::size_t offset = call.offset_elements * element_bytes;
          first_error = call.send
                            ? api_.send(static_cast<const char*>(send) + offset, count, type, call.peer, comm, stream_)
                            : api_.recv(static_cast<char*>(recv) + offset, count, type, call.peer, comm, stream_);
        });
    const ncclResult_t end = api_.group_end();
    return first_error != ncclSuccess ? first_error : end;
  });
}

const PatternPeers& NcclBackend::peers_of(const CaseSpec& c) {
  const auto key = std::tuple{c.sendrecv_pattern, c.peer_group, c.rank, c.nranks};
  if (peers_for_ != key) {
    peers_ = pattern_peers(c.sendrecv_pattern, c.peer_group, c.rank, c.nranks);
    peers_for_ = key;
  }
  return peers_;
}

void NcclBackend::enqueue_blocks(const CaseSpec& c, const void* send, void* recv) {
  const ncclDataType_t type = *nccl::data_type(c.dtype);
  const std::size_t element_bytes = info(c.dtype).size_bytes;
  const PatternPeers& peers = peers_of(c);
  nccl_call(&c, "grouped ncclSend/ncclRecv", [&](ncclComm_t comm) {
    ncclResult_t first_error = api_.group_start();
    for_each_block_call(peers, c.layout.count, c.block_elements, [&](const BlockCall& call) {
      if (first_error != ncclSuccess) return;
      const std::size_t offset = call.offset_elements * element_bytes;
      first_error = call.send
                        ? api_.send(static_cast<const char*>(send) + offset, call.count, type, call.peer, comm, stream_)
                        : api_.recv(static_cast<char*>(recv) + offset, call.count, type, call.peer, comm, stream_);
    });
    const ncclResult_t end = api_.group_end();
    return first_error != ncclSuccess ? first_error : end;
  });
}

void NcclBackend::enqueue_matrix(const CaseSpec& c, const AlltoallvCounts& counts, const void* send, void* recv) {
  const ncclDataType_t type = *nccl::data_type(c.dtype);
  const std::size_t elt = info(c.dtype).size_bytes;
  cudaStream_t stream = stream_;
  // One group of a send and a receive per peer with a block (an empty one is not posted: a zero
  // count is a no-op both sides agree on, since each side's count is the same matrix entry).
  nccl_call(&c, "grouped ncclSend/ncclRecv", [&](ncclComm_t comm) {
    ncclResult_t first_error = api_.group_start();
    for (int peer = 0; peer < comm_size_ && first_error == ncclSuccess; ++peer) {
      const auto p = static_cast<std::size_t>(peer);
      if (counts.send_counts[p] > 0) {
        first_error = api_.send(static_cast<const char*>(send) + counts.send_displs[p] * elt, counts.send_counts[p],
                                type, peer, comm, stream);
      }
      if (first_error == ncclSuccess && counts.recv_counts[p] > 0) {
        first_error = api_.recv(static_cast<char*>(recv) + counts.recv_displs[p] * elt, counts.recv_counts[p], type,
                                peer, comm, stream);
      }
    }
    const ncclResult_t end = api_.group_end();
    return first_error != ncclSuccess ? first_error : end;
  });
}

void NcclBackend::prepare_graph(const CaseSpec& c) {
  const GraphKey key{c.op, c.dtype, c.redop, c.in_place, c.root, c.layout.count};
  if (graph_key_ == key && comm_.has_graph()) return;
  // The previous case's graph goes now: each graph that captured the communicator holds NCCL
  // resources (and finalize waits for it), as nccl-tests destroys its graphs after each size.
  comm_.destroy_graph();
  graph_key_.reset();
  // One eager op first: NCCL connects peers lazily at the first op of a kind, which must not happen
  // inside a capture.
  enqueue(c);
  wait_stream(&c);
  check_cuda(api_.stream_begin_capture(stream_), &c, "cudaStreamBeginCapture");
  cudaGraph_t graph = nullptr;
  try {
    for (int i = 0; i < options_.graph_launches; ++i) enqueue(c);
  } catch (...) {
    api_.stream_end_capture(stream_, &graph);
    if (graph != nullptr) api_.graph_destroy(graph);
    throw;
  }
  check_cuda(api_.stream_end_capture(stream_, &graph), &c, "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  const cudaError_t e = api_.graph_instantiate(&exec, graph);
  api_.graph_destroy(graph);
  check_cuda(e, &c, "cudaGraphInstantiate");
  comm_.adopt_graph(exec);
  graph_key_ = key;
}

double NcclBackend::time_batch_us(const CaseSpec& c, int batch) {
  // With -G N each of the engine's `batch` ops is a graph of N ops: the time of batch*N ops is
  // scaled to `batch` ops, so the engine's per-op time stays right. The graph was made in fill().
  const bool graphs = options_.graph_launches > 0;
  const GraphKey key{c.op, c.dtype, c.redop, c.in_place, c.root, c.layout.count};
  if (graphs && (graph_key_ != key || !comm_.has_graph())) {
    throw BackendError(describe(c) + ": -G: no CUDA graph for this case (fill() makes it, outside the timed region)");
  }
  check_cuda(api_.event_record(start_, stream_), &c, "cudaEventRecord");
  for (int i = 0; i < batch; ++i) {
    if (graphs) {
      check_cuda(comm_.launch_graph(stream_), &c, "cudaGraphLaunch");
    } else {
      enqueue(c);
    }
  }
  check_cuda(api_.event_record(stop_, stream_), &c, "cudaEventRecord");
  wait_event(stop_, &c);
  float ms = 0;
  check_cuda(api_.event_elapsed_ms(&ms, start_, stop_), &c, "cudaEventElapsedTime");
  const double us = static_cast<double>(ms) * 1000.0;
  return graphs ? us / options_.graph_launches : us;
}

std::uint64_t NcclBackend::verify(const CaseSpec& c, const pattern::Params& p) {
  const Placement place = placement(c);
  const DTypeInfo& dtype = info(c.dtype);
  // avg of floating types: NCCL multiplies each input by 1/nranks rounded to the type, so the exact
  // result may come out one ulp off (docs/nccl-backend.md). Everything else is exact.
  const bool one_ulp = dtype.is_floating && info(c.op).is_reduction && c.redop == RedOp::avg;
  check_cuda(api_.memset_async(d_wrong_, 0, sizeof *d_wrong_, stream_), &c, "cudaMemsetAsync");
  if (c.matrix) {
    // Each peer's block is that peer's pattern at the block's place in its send buffer (the kernel's
    // `rank` and `first`); moe_pair's combine output is this rank's own input.
    const AlltoallvCounts& counts = c.matrix->counts;
    for (std::size_t peer = 0; peer < counts.recv_counts.size(); ++peer) {
      if (counts.recv_counts[peer] == 0) continue;
      check_cuda(api_.count_wrong(c.dtype, recv_at(c, counts.recv_displs[peer]), counts.recv_counts[peer], c.op, p,
                                  static_cast<int>(peer), 0, counts.source_offsets[peer], false, d_wrong_, stream_),
                 &c, "verify kernel");
    }
    if (c.matrix->combine.recv_elements > 0) {
      check_cuda(api_.count_wrong(c.dtype, recv_at(c, counts.recv_elements), c.matrix->combine.recv_elements, c.op, p,
                                  c.rank, 0, 0, false, d_wrong_, stream_),
                 &c, "verify kernel");
    }
  } else if (c.posts_blocks()) {
    // The k-th sender's message at k x count. sendrecv's expected value is the data of rank-1, so
    // the kernel is given the rank after the sender.
    const std::vector<int>& senders = peers_of(c).receive_from;
    for (std::size_t k = 0; k < senders.size(); ++k) {
      check_cuda(api_.count_wrong(c.dtype, recv_at(c, k * c.layout.count), c.layout.count, c.op, p,
                                  (senders[k] + 1) % c.nranks, c.layout.count, 0, false, d_wrong_, stream_),
                 &c, "verify kernel");
    }
  } else {
    check_cuda(api_.count_wrong(c.dtype, recv_at(c, place.output_offset), place.output_elements, c.op, p, c.rank,
                                c.layout.count, 0, one_ulp, d_wrong_, stream_),
               &c, "verify kernel");
  }
  check_cuda(api_.memcpy_to_host_async(h_wrong_, d_wrong_, sizeof *d_wrong_, stream_), &c, "cudaMemcpyAsync");
  wait_stream(&c);
  return *h_wrong_;
}

// A batch's calls each have their own region, sends from send_ and receives into recv_ in batch
// order (as the MPI backend lays them out). The whole batch is one group: NCCL starts every send and
// receive of a group together, so a pair both ranks issue send-first cannot deadlock.
double NcclBackend::time_point_to_point_us(std::span<const PointToPointCall> batch) {
  check_cuda(api_.event_record(start_, stream_), nullptr, "cudaEventRecord");
  nccl_call(nullptr, "grouped ncclSend/ncclRecv", [&](ncclComm_t comm) {
    ncclResult_t first_error = api_.group_start();
    std::uint64_t send_offset = 0, recv_offset = 0;
    for (const PointToPointCall& call : batch) {
      if (first_error != ncclSuccess) break;
      const ncclDataType_t type = *nccl::data_type(call.dtype);
      const std::uint64_t bytes = call.count * info(call.dtype).size_bytes;
      if (call.send) {
        first_error =
            api_.send(static_cast<const char*>(send_) + send_offset, call.count, type, call.peer, comm, stream_);
        send_offset += bytes;
      } else {
        first_error = api_.recv(static_cast<char*>(recv_) + recv_offset, call.count, type, call.peer, comm, stream_);
        recv_offset += bytes;
      }
    }
    const ncclResult_t end = api_.group_end();
    return first_error != ncclSuccess ? first_error : end;
  });
  check_cuda(api_.event_record(stop_, stream_), nullptr, "cudaEventRecord");
  wait_event(stop_, nullptr);
  float ms = 0;
  check_cuda(api_.event_elapsed_ms(&ms, start_, stop_), nullptr, "cudaEventElapsedTime");
  return static_cast<double>(ms) * 1000.0;
}

// The message (core/message_pattern.hpp) is run's plain data of its sender: the kernels' input of a
// non-reducing op (alltoallv: data_value of `rank` at the index) under the message's parameters.
void NcclBackend::fill_point_to_point(std::span<const PointToPointCall> batch, int self, const pattern::Params& p) {
  std::uint64_t send_offset = 0, recv_offset = 0;
  for (const PointToPointCall& call : batch) {
    const std::uint64_t bytes = call.count * info(call.dtype).size_bytes;
    if (call.send) {
      pattern::Params message = pattern::message_params(p, call.peer, call.sequence);
      message.is_signed = info(call.dtype).is_signed;
      check_cuda(api_.fill_input(call.dtype, static_cast<char*>(send_) + send_offset, call.count, Op::alltoallv,
                                 message, self, 0, stream_),
                 nullptr, "fill kernel");
      send_offset += bytes;
    } else {
      check_cuda(api_.fill_poison(call.dtype, static_cast<char*>(recv_) + recv_offset, call.count, stream_), nullptr,
                 "poison kernel");
      recv_offset += bytes;
    }
  }
  wait_stream(nullptr);
}

std::vector<std::uint64_t> NcclBackend::verify_point_to_point(std::span<const PointToPointCall> batch, int self,
                                                              const pattern::Params& p) {
  std::vector<std::uint64_t> wrong(batch.size(), 0);
  std::uint64_t recv_offset = 0;
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const PointToPointCall& call = batch[k];
    if (call.send) continue;
    pattern::Params message = pattern::message_params(p, self, call.sequence);
    message.is_signed = info(call.dtype).is_signed;
    check_cuda(api_.memset_async(d_wrong_, 0, sizeof *d_wrong_, stream_), nullptr, "cudaMemsetAsync");
    check_cuda(api_.count_wrong(call.dtype, static_cast<char*>(recv_) + recv_offset, call.count, Op::alltoallv, message,
                                call.peer, 0, 0, false, d_wrong_, stream_),
               nullptr, "verify kernel");
    check_cuda(api_.memcpy_to_host_async(h_wrong_, d_wrong_, sizeof *d_wrong_, stream_), nullptr, "cudaMemcpyAsync");
    wait_stream(nullptr);
    wrong[k] = *h_wrong_;
    recv_offset += call.count * info(call.dtype).size_bytes;
  }
  return wrong;
}

void NcclBackend::corrupt_output_for_test(const CaseSpec& c) {
  if (placement(c).output_elements == 0) return;
  check_cuda(api_.fill_poison(c.dtype, recv_at(c, placement(c).output_offset), 1, stream_), &c, "poison kernel");
  wait_stream(&c);
}

nlohmann::json NcclBackend::metadata() const {
  nlohmann::json meta = nccl_library_versions();
  meta["nccl_path"] = path_;
  meta["nccl_env_set"] = env_set_;
  meta["cuda_graph_launches"] = options_.graph_launches;
  meta["buffer_registration"] = ccbench::name(options_.registration);
  meta["alltoall"] = has_alltoall_ ? "ncclAlltoAll" : "grouped ncclSend/ncclRecv";
  meta["gather_scatter"] = has_gather_scatter_ ? "ncclGather/ncclScatter" : "grouped ncclSend/ncclRecv";
  meta["nccl_communicator"] = "blocking (split from a nonblocking init communicator)";
  meta["nccl_init_timeout_s"] = init_timeout_s_;
  meta["gpus"] = gpus_;
  const nlohmann::json log = nccl::to_json(log_);
  if (!log.empty()) meta["nccl_log"] = log;
  if (!log_.ofi_nccl_version.empty()) meta["ofi_nccl"] = log_.ofi_nccl_version;
  // The net plugin NCCL used: its own name from the log, else the library mapped in the process.
  std::string plugin = log_.net_plugin;
  if (!log_.network.empty()) plugin = plugin.empty() ? log_.network : plugin + " (network " + log_.network + ")";
  if (plugin.empty() && !net_plugin_libraries_.empty()) plugin = net_plugin_libraries_.front();
  meta["net_plugin"] = plugin.empty() ? nlohmann::json(nullptr) : nlohmann::json(plugin);
  if (!net_plugin_libraries_.empty()) meta["net_plugin_libraries"] = net_plugin_libraries_;

  // The largest nominal size (-e) whose out-of-place buffers fit this GPU's budget, per op.
  const std::uint64_t budget = memory_budget_bytes(1);
  const auto n = static_cast<std::uint64_t>(comm_size_);
  meta["gpu_buffer_budget_bytes"] = budget;
  meta["largest_bytes"] = {{"allreduce", budget / 2},
                           {"broadcast", budget / 2},
                           {"alltoall", budget / 2},
                           {"allgather", budget / (n + 1) * n},
                           {"reduce_scatter", budget / (n + 1) * n},
                           {"sendrecv", budget / 2},
                           {"reduce", budget / 2},
                           {"gather", budget / (n + 1) * n},
                           {"scatter", budget / (n + 1) * n}};

  // The path from the transports NCCL connected (connect_once), else from the environment.
  nlohmann::json fabric = {{"path", nccl::fabric_path(log_, path_env_, nodes_)}};
  const std::string provider = nccl::fabric_provider(log_);
  fabric["provider"] = provider.empty() ? nlohmann::json(nullptr) : nlohmann::json(provider);
  meta["fabric"] = fabric;
  meta["fabric_path_from"] = log_.transports.empty() ? "environment" : "nccl transports";
  return meta;
}

nlohmann::json NcclBackend::final_metadata() {
  // EFA traffic of the run, per node: the first rank of each host reads its counters, rank 0
  // gathers them. Collective: every rank calls this after the sweep.
  std::string mine;
  if (efa_reader_) {
    const nccl::EfaCounters delta = nccl::counter_delta(efa_start_, nccl::read_efa_counters());
    if (!delta.empty()) mine = nlohmann::json{{"host", hostname()}, {"counters", nccl::to_json(delta)}}.dump();
  }
  const std::vector<std::string> all = channel_.gather_to_root(mine);
  if (rank_ != 0) return nlohmann::json::object();

  nlohmann::json out = nlohmann::json::object();
  nlohmann::json efa = nlohmann::json::object();
  for (const std::string& text : all) {
    if (text.empty()) continue;
    const auto entry = nlohmann::json::parse(text, nullptr, false);
    if (entry.is_object()) efa[entry.value("host", "?")] = entry["counters"];
  }
  if (!efa.empty()) out["efa_counters"] = efa;
  // Every transport NCCL connected during the sweep (each op kind connects its own on first use).
  if (!nccl_log_path_.empty()) {
    const nccl::NcclLogInfo log = nccl::parse_nccl_log(read_file(nccl_log_path_));
    if (!log.transports.empty()) out["nccl_transports"] = log.transports;
  }
  return out;
}

}  // namespace

std::unique_ptr<Backend> create_nccl_backend(const BackendOptions& options) {
  return std::make_unique<NcclBackend>(options, nccl::real_api(), std::function<void()>{});
}

std::unique_ptr<Backend> create_nccl_backend(const BackendOptions& options, nccl::NcclApi& api,
                                             std::function<void()> on_aborted) {
  return std::make_unique<NcclBackend>(options, api, std::move(on_aborted));
}

nlohmann::json nccl_library_versions() {
  nlohmann::json versions = nlohmann::json::object();
  int nccl_version = 0;
  if (ncclGetVersion(&nccl_version) == ncclSuccess) versions["nccl"] = nccl::version_string(nccl_version);
  versions["nccl_build"] = nccl::version_string(NCCL_VERSION_CODE);
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess && runtime > 0) {
    versions["cuda_runtime"] = cuda_version_string(runtime);
  }
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) versions["cuda_driver"] = cuda_version_string(driver);
  return versions;
}

}  // namespace ccbench
