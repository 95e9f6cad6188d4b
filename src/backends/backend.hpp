// The interface every collective backend implements (MPI on host memory, NCCL on GPUs). The sweep
// engine owns planning, warm-up, sampling, batching, trials and cross-rank aggregation; a backend
// only knows how to allocate, fill, launch, time and verify one case. See docs/backends.md.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/bandwidth.hpp"
#include "core/buffer_registration.hpp"
#include "core/path_proof.hpp"
#include "core/pattern.hpp"
#include "core/sendrecv_pattern.hpp"
#include "core/traffic_matrix.hpp"
#include "core/types.hpp"

namespace ccbench {

// One measured point of the plan.
struct CaseSpec {
  Op op = Op::allreduce;
  DType dtype = DType::float32;
  RedOp redop = RedOp::sum;
  bool in_place = false;
  int root = 0;
  int nranks = 1;
  int rank = 0;
  OpLayout layout;
  // Matrix ops (alltoallv, moe_*): this rank's per-peer counts; null for every other op.
  std::shared_ptr<const MatrixCase> matrix;
  // sendrecv's peers (core/sendrecv_pattern.hpp): the pattern, its group (0 for ring) and the
  // elements of each block (0: a message is one block). layout.count is one message; a rank's
  // receive buffer holds one message per sender it receives from.
  SendRecvPattern sendrecv_pattern = SendRecvPattern::ring;
  int peer_group = 0;
  std::uint64_t block_elements = 0;
  // Posted as blocks between pattern peers, not as nccl-tests' one send and receive.
  bool posts_blocks() const {
    return op == Op::sendrecv && (sendrecv_pattern != SendRecvPattern::ring || block_elements > 0);
  }
};

// Raised by a backend when the communication layer reports that a peer is gone (exit 4).
class PeerFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Raised by a backend for an error of its runtime that is not a peer failure (exit 2 before
// measuring, or reported with the op and size during the run).
class BackendError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ControlChannel;  // sweep/channel.hpp (header-only: the one sweep header backends see)

// Options that only some backends read (the NCCL path presets, CUDA graphs, the libfabric
// endpoint); an option a backend does not take is rejected by it (exit 2).
struct BackendOptions {
  std::string path;        // nccl: nvlink | efa | all
  int graph_launches = 0;  // nccl: -G, capture this many ops in a CUDA graph per launch
  BufferRegistration registration = BufferRegistration::none;  // nccl: -R
  int local_rank = 0;                                          // rank within the node (GPU selection)
  int local_size = 1;
  // The control channel between ranks for set-up exchanges (NCCL's unique id, libfabric's
  // addresses): never MPI directly. Outlives the backend. Always the whole job's channel.
  ControlChannel* channel = nullptr;
  // The backend's communicator: every rank of `channel` (-1), or the ranks that pass the same
  // color >= 0 (concurrent groups, congestion's measured and congestor sets), ranked in channel
  // order. Backends split it themselves (MPI_Comm_split, ControlChannel::split for NCCL's id), so
  // CaseSpec.rank/nranks are then the rank and size within the group.
  int group_color = -1;
  // libfabric (`ccbench fabric`): provider ("" = default choice), domain, window, memory.
  std::string provider;
  std::string domain;
  int window = 64;
  std::string memory = "host";  // host | cuda
  bool want_rma = false;
  double probe_timeout_s = 30;  // the message each way that proves the peer is reachable
  // The run session's set-up watchdog deadline (0 = none): a backend's own set-up timeouts end
  // strictly inside it (core/deadlines.hpp).
  double setup_watchdog_s = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string_view name() const = 0;
  // How a sample's time is read: "MPI_Wtime" (host clock) or "cudaEvent" (on the op's stream).
  virtual std::string_view clock() const = 0;

  // Why this backend cannot run the case (dtype, redop, in-place variant), or nullopt.
  virtual std::optional<std::string> unsupported(const CaseSpec& c) const = 0;

  // Bytes this rank needs for send and receive buffers to run `c` (in-place cases use one buffer).
  virtual std::uint64_t send_bytes_needed(const CaseSpec& c) const;
  virtual std::uint64_t recv_bytes_needed(const CaseSpec& c) const;
  // Memory this rank may use for buffers (host: MemAvailable / ranks on the node; GPU: free memory).
  virtual std::uint64_t memory_budget_bytes(int ranks_on_node) const = 0;

  // Allocates the buffers once, for the largest case of the plan.
  virtual void allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) = 0;
  // Writes the seeded input of the case (and poisons the output region).
  virtual void fill(const CaseSpec& c, const pattern::Params& p) = 0;
  // Enqueues one op (asynchronous on GPUs).
  virtual void launch(const CaseSpec& c) = 0;
  // Waits until every launched op has completed.
  virtual void synchronize() = 0;
  // Launches `batch` ops back to back and returns the elapsed time of the batch in microseconds.
  virtual double time_batch_us(const CaseSpec& c, int batch) = 0;
  // Number of output elements on this rank that differ from pattern::expected_value.
  virtual std::uint64_t verify(const CaseSpec& c, const pattern::Params& p) = 0;

  // Test-only: spoil one output element after the checked op, so tests can see exit 1.
  virtual void corrupt_output_for_test(const CaseSpec& c) = 0;
  // Called from the watchdog thread before the process exits on a hang (ncclCommAbort for NCCL).
  virtual void abort() noexcept {}

  // Library versions, devices and anything else a result file needs to be reproducible.
  virtual nlohmann::json metadata() const = 0;
  // Called on every rank after the sweep, before the result file is finished (collective for the
  // backends that gather from every node, e.g. EFA traffic counters); what rank 0 returns is
  // merged into the result file beside metadata(). Default: nothing to add.
  virtual nlohmann::json final_metadata() { return nlohmann::json::object(); }

  // --require-path (docs/path-proof.md): the paths this backend's own evidence proves (NCCL's
  // transports and EFA counters, the libfabric provider opened). Empty: the session proves the
  // path from the hosts' interface and EFA counters against the bytes the sweep moved.
  virtual std::vector<proof::PathKind> provable_paths() const { return {}; }
  // Collective (every rank calls it): this backend's verdict on `required` for what it carried since
  // allocate() (`final_window`: the run is over, so undecided becomes failed). `rails`: the least
  // number of devices per node that must have carried traffic (0 = no such rule). Called only for a
  // kind provable_paths() lists.
  virtual proof::ProofResult prove_path(const proof::RequiredPath& required, int rails, bool final_window);
};

// Why a matrix op (alltoallv, moe_*) cannot run, or nullopt: no matrix given, in place, or a
// buffer of more than `max_count` elements (the largest count or displacement the library takes).
std::optional<std::string> matrix_unsupported(const CaseSpec& c, std::uint64_t max_count);

// The backend table (backends/registry.cpp): names and factories, one line per backend.
struct BackendEntry {
  std::string_view name;
  std::string_view summary;
  std::unique_ptr<Backend> (*create)(const BackendOptions& options);  // null when not built in
  std::string_view missing_reason;                                    // why it is not built in
};

const std::vector<BackendEntry>& backend_table();

// Throws UsageError for an unknown backend or one not built in (exit 2).
std::unique_ptr<Backend> make_backend(std::string_view name, const BackendOptions& options);

// Versions of the libraries this binary was built with, for `ccbench info` and result files.
nlohmann::json built_in_library_versions();

}  // namespace ccbench
