// libfabric as a `Backend` of the sweep engine: the engine does warm-up, batching, adaptive
// sampling, trials, the data check and aggregation unchanged; this class moves the bytes between
// exactly two ranks through one FI_EP_RDM endpoint each. Rank 0 initiates, rank 1 answers.
//
// What one "op" is (the engine's unit; time_batch_us divides so that a sample is what the row means):
//   fabric_pingpong  rank 0 sends, rank 1 replies; sample = half the round trip (fi_pingpong's usec/xfer)
//   fabric_bw        rank 0 posts `window` sends, rank 1 acknowledges the window; sample = time per message
//   fabric_bibw      both post `window` sends and receives; sample = time per message and direction
//   fabric_write     rank 0 posts `window` RMA writes into rank 1's buffer; sample = time per write
//   fabric_read      rank 0 posts `window` RMA reads from rank 1's buffer; sample = time per read
// See docs/fabric.md.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "fabric/fabric_memory.hpp"
#include "fabric/fabric_options.hpp"

namespace ccbench::fabric {

// Swaps a blob with the peer over the control channel (MPI in `ccbench fabric`).
using Exchange = std::function<std::string(const std::string& mine)>;

struct EndpointOptions {
  std::string provider;  // a name fi_getinfo knows ("shm", "tcp", "tcp;ofi_rxm", "efa")
  std::string domain;    // empty: the provider's first
  bool want_rma = false;
  MemoryKind memory = MemoryKind::host;
  int window = 64;
  int rank = 0;  // 0 or 1
  int cuda_device = 0;
};

class FabricBackend final : public Backend {
 public:
  // Opens fabric, domain, completion queues, address vector and endpoint (no communication).
  // Throws UsageError for a provider fi_getinfo does not offer (the message lists those it does)
  // or one that lacks what was asked (FI_HMEM), BackendError for other libfabric failures.
  explicit FabricBackend(const EndpointOptions& options);
  ~FabricBackend() override;
  FabricBackend(const FabricBackend&) = delete;
  FabricBackend& operator=(const FabricBackend&) = delete;

  // The endpoint's address (fi_getname), to hand to the peer.
  std::string local_address() const;
  // Inserts the peer's address into the address vector.
  void connect(const std::string& peer_address);
  // One small message each way, bounded by timeout_s: "" when the peer answered, else why not.
  std::string probe(double timeout_s);
  // Used by allocate() to swap RMA addresses and keys.
  void set_exchange(Exchange exchange) { exchange_ = std::move(exchange); }

  bool tagged() const { return tagged_; }
  bool rma() const { return rma_; }
  const std::string& provider() const { return provider_; }
  // The result file's fabric section (describe_info plus how this run uses it).
  nlohmann::json describe() const;
  // Why the caps are what they are ("no FI_TAGGED: untagged FI_MSG", ...), for the result file.
  const std::vector<std::string>& notes() const { return notes_; }

  std::string_view name() const override { return "libfabric"; }
  std::string_view clock() const override { return "steady_clock"; }
  std::optional<std::string> unsupported(const CaseSpec& c) const override;
  std::uint64_t memory_budget_bytes(int ranks_on_node) const override;
  void allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) override;
  void fill(const CaseSpec& c, const pattern::Params& p) override;
  void launch(const CaseSpec& c) override;
  void synchronize() override {}
  double time_batch_us(const CaseSpec& c, int batch) override;
  std::uint64_t verify(const CaseSpec& c, const pattern::Params& p) override;
  void corrupt_output_for_test(const CaseSpec& c) override;
  nlohmann::json metadata() const override;
  // --require-path: the provider of the endpoint this backend opened is the evidence.
  std::vector<proof::PathKind> provable_paths() const override;
  proof::ProofResult prove_path(const proof::RequiredPath& required, int rails, bool final_window) override;

 private:
  struct Region {
    Buffer buffer;
    fid_mr* mr = nullptr;
    void* desc = nullptr;
  };

  void open_endpoint(const EndpointOptions& options);
  void register_region(Region& region, std::uint64_t access, std::uint64_t key);
  void close_all() noexcept;

  // One op, `reps` times back to back; `checking` makes RMA writes delivery-complete.
  void run_op(const CaseSpec& c, int reps, bool checking);
  void pingpong(std::size_t bytes, int reps);
  void bw(std::size_t bytes, int reps);
  void bibw(std::size_t bytes, int reps);
  void rma(Op op, std::size_t bytes, int reps, bool checking);

  // Posting (retries -FI_EAGAIN while progressing) and completion counting.
  void post_send(const void* buf, std::size_t len, void* desc, std::uint64_t tag);
  void post_recv(void* buf, std::size_t len, void* desc, std::uint64_t tag);
  void post_rma(Op op, std::size_t len, bool deliver);
  void progress();
  void poll(fid_cq* cq, std::uint64_t& done);
  void wait_tx_all();
  void wait_rx(std::uint64_t target);
  [[noreturn]] void fail(const std::string& what, int rc) const;
  [[noreturn]] void completion_error(fid_cq* cq, const char* which) const;
  fi_context2* next_context(std::vector<fi_context2>& pool, std::size_t& index);
  bool receives(Op op) const;

  int rank_ = 0;
  int window_ = 64;
  MemoryKind memory_ = MemoryKind::host;
  int cuda_device_ = 0;
  std::string provider_;
  std::vector<std::string> notes_;
  bool tagged_ = true;
  bool rma_ = false;
  bool mr_local_ = false;
  bool virt_addr_ = false;
  bool prov_key_ = false;
  bool deliver_complete_ok_ = true;
  std::size_t inject_size_ = 0;
  std::uint64_t max_msg_size_ = 0;

  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* txcq_ = nullptr;
  fid_cq* rxcq_ = nullptr;
  fid_ep* ep_ = nullptr;
  fi_addr_t peer_ = FI_ADDR_UNSPEC;

  Region send_;
  Region recv_;
  Region ctrl_tx_;
  Region ctrl_rx_;
  std::uint64_t remote_send_addr_ = 0, remote_send_key_ = 0;  // read source on the peer
  std::uint64_t remote_recv_addr_ = 0, remote_recv_key_ = 0;  // write target on the peer
  Exchange exchange_;

  std::vector<fi_context2> tx_ctx_, rx_ctx_;
  std::size_t tx_ctx_next_ = 0, rx_ctx_next_ = 0;
  std::uint64_t tx_posted_ = 0, tx_done_ = 0, rx_posted_ = 0, rx_done_ = 0;
  std::optional<std::chrono::steady_clock::time_point> probe_deadline_;
  Op current_op_ = Op::fabric_pingpong;
  std::size_t current_bytes_ = 0;
  std::vector<std::uint8_t> staging_;
};

}  // namespace ccbench::fabric
