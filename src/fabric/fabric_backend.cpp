#include "fabric/fabric_backend.hpp"

#include <fmt/format.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <sys/uio.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/error.hpp"
#include "fabric/providers.hpp"
#include "system/host_info.hpp"

#ifdef CCBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ccbench::fabric {
namespace {

constexpr std::uint64_t kTagData = 0x1;
constexpr std::uint64_t kTagAck = 0x2;
constexpr std::uint64_t kTagDone = 0x3;
constexpr std::uint64_t kTagProbe = 0x4;
constexpr std::size_t kCtrlBytes = 64;
constexpr std::size_t kCtrlMessage = 4;
// A byte the pattern never produces (uint8 data is 0..8), so stale receive buffers count as wrong.
constexpr std::uint8_t kPoison = 0xEE;

struct InfoDeleter {
  void operator()(fi_info* i) const { fi_freeinfo(i); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

InfoPtr make_hints(const EndpointOptions& o, const std::string& provider, std::uint64_t caps) {
  InfoPtr hints(fi_allocinfo());
  if (!hints) throw BackendError("fi_allocinfo failed");
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = caps;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  // The registration modes this code honours; the provider answers with those it needs.
  int mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  if (o.memory == MemoryKind::cuda) mr_mode |= FI_MR_HMEM;
  hints->domain_attr->mr_mode = mr_mode;
  hints->fabric_attr->prov_name = strdup(provider.c_str());
  if (!o.domain.empty()) hints->domain_attr->name = strdup(o.domain.c_str());
  return hints;
}

InfoPtr getinfo(const EndpointOptions& o, const std::string& provider, std::uint64_t caps) {
  InfoPtr hints = make_hints(o, provider, caps);
  fi_info* list = nullptr;
  if (fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), nullptr, nullptr, 0, hints.get(), &list) != 0) {
    return nullptr;
  }
  InfoPtr all(list);
  // The first match (fi_getinfo orders by preference); some utility providers do not filter on the
  // domain hint, so a requested domain is matched here too.
  for (const fi_info* i = all.get(); i != nullptr; i = i->next) {
    const char* domain = i->domain_attr->name;
    if (o.domain.empty() || (domain != nullptr && o.domain == domain)) return InfoPtr(fi_dupinfo(i));
  }
  return nullptr;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

struct ProbeTimeout {};

bool is_peer_error(int err) {
  switch (err) {
    case FI_ECONNRESET:
    case FI_ECONNABORTED:
    case FI_ECONNREFUSED:
    case FI_ENOTCONN:
    case FI_EHOSTUNREACH:
    case FI_ESHUTDOWN:
      return true;
    default:
      return false;
  }
}

}  // namespace

FabricBackend::FabricBackend(const EndpointOptions& options)
    : rank_(options.rank), window_(options.window), memory_(options.memory), cuda_device_(options.cuda_device) {
  try {
    open_endpoint(options);
  } catch (...) {
    close_all();
    throw;
  }
}

FabricBackend::~FabricBackend() { close_all(); }

void FabricBackend::open_endpoint(const EndpointOptions& o) {
  if (o.memory == MemoryKind::cuda) {
    if (const std::string why = cuda_unavailable_reason(); !why.empty()) throw UsageError("--memory cuda: " + why);
  }
  const std::uint64_t hmem = o.memory == MemoryKind::cuda ? FI_HMEM : 0;
  // Tagged messages first; untagged FI_MSG where the provider has no FI_TAGGED. RMA only if asked.
  std::vector<std::uint64_t> candidates;
  if (o.want_rma) candidates.push_back(FI_TAGGED | FI_RMA | hmem);
  candidates.push_back(FI_TAGGED | hmem);
  if (o.want_rma) candidates.push_back(FI_MSG | FI_RMA | hmem);
  candidates.push_back(FI_MSG | hmem);

  // Debian's 1.17 offers tcp's reliable datagrams through the rxm utility provider: "tcp;ofi_rxm".
  std::vector<std::string> names = {o.provider};
  if (o.provider.find(';') == std::string::npos) names.push_back(o.provider + ";ofi_rxm");

  InfoPtr chosen;
  std::uint64_t chosen_caps = 0;
  for (const auto& provider : names) {
    for (std::uint64_t caps : candidates) {
      chosen = getinfo(o, provider, caps);
      if (chosen) {
        chosen_caps = caps;
        break;
      }
    }
    if (chosen) break;
  }
  if (!chosen) {
    const auto entries = query_providers();
    const auto rdm = rdm_provider_names(entries);
    bool exists = false;
    for (const auto& e : entries)
      exists = exists || e.provider == o.provider || core_provider(e.provider) == o.provider;
    std::string domain = o.domain.empty() ? "" : " with domain '" + o.domain + "'";
    if (hmem != 0 && exists) {
      throw UsageError(
          fmt::format("--memory cuda: provider '{}'{} does not offer FI_HMEM (GPU buffers) here", o.provider, domain));
    }
    throw UsageError(fmt::format(
        "-p/--provider '{}'{}: {} here (providers with reliable datagram endpoints: {}; see --list-providers)",
        o.provider, domain, exists ? "offers no FI_EP_RDM endpoint with FI_MSG or FI_TAGGED" : "no such provider",
        rdm.empty() ? "none" : join(rdm)));
  }
  info_ = chosen.release();
  provider_ = info_->fabric_attr->prov_name != nullptr ? info_->fabric_attr->prov_name : o.provider;
  tagged_ = (chosen_caps & FI_TAGGED) != 0;
  rma_ = (chosen_caps & FI_RMA) != 0;
  if (!tagged_) notes_.push_back("provider has no FI_TAGGED: untagged FI_MSG messages are used");
  if (o.want_rma && !rma_) notes_.push_back("provider has no FI_RMA: write and read are skipped");
  const int mr_mode = info_->domain_attr->mr_mode;
  mr_local_ = (mr_mode & FI_MR_LOCAL) != 0;
  virt_addr_ = (mr_mode & FI_MR_VIRT_ADDR) != 0;
  prov_key_ = (mr_mode & FI_MR_PROV_KEY) != 0;
  if (rma_ && info_->domain_attr->mr_key_size > sizeof(std::uint64_t)) {
    rma_ = false;
    notes_.push_back("provider needs raw memory keys (FI_MR_RAW): write and read are skipped");
  }
  inject_size_ = info_->tx_attr->inject_size;
  max_msg_size_ = info_->ep_attr->max_msg_size;

  int rc = fi_fabric(info_->fabric_attr, &fabric_, nullptr);
  if (rc != 0) fail("fi_fabric", rc);
  rc = fi_domain(fabric_, info_, &domain_, nullptr);
  if (rc != 0) fail("fi_domain", rc);

  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_CONTEXT;
  cq_attr.wait_obj = FI_WAIT_NONE;  // busy polling, as fi_pingpong does
  cq_attr.size = std::max<std::size_t>(info_->tx_attr->size, static_cast<std::size_t>(2 * window_ + 16));
  rc = fi_cq_open(domain_, &cq_attr, &txcq_, nullptr);
  if (rc != 0) fail("fi_cq_open (transmit)", rc);
  cq_attr.size = std::max<std::size_t>(info_->rx_attr->size, static_cast<std::size_t>(2 * window_ + 16));
  rc = fi_cq_open(domain_, &cq_attr, &rxcq_, nullptr);
  if (rc != 0) fail("fi_cq_open (receive)", rc);

  fi_av_attr av_attr{};
  av_attr.type = info_->domain_attr->av_type != FI_AV_UNSPEC ? info_->domain_attr->av_type : FI_AV_TABLE;
  av_attr.count = 2;
  rc = fi_av_open(domain_, &av_attr, &av_, nullptr);
  if (rc != 0) fail("fi_av_open", rc);

  rc = fi_endpoint(domain_, info_, &ep_, nullptr);
  if (rc != 0) fail("fi_endpoint", rc);
  if ((rc = fi_ep_bind(ep_, &av_->fid, 0)) != 0) fail("fi_ep_bind (av)", rc);
  if ((rc = fi_ep_bind(ep_, &txcq_->fid, FI_TRANSMIT)) != 0) fail("fi_ep_bind (transmit cq)", rc);
  if ((rc = fi_ep_bind(ep_, &rxcq_->fid, FI_RECV)) != 0) fail("fi_ep_bind (receive cq)", rc);
  if ((rc = fi_enable(ep_)) != 0) fail("fi_enable", rc);

  const std::size_t pool = static_cast<std::size_t>(2 * window_ + 16);
  tx_ctx_.resize(pool);
  rx_ctx_.resize(pool);

  // Control messages (acks, done, probe) live in small host buffers of their own.
  ctrl_tx_.buffer = Buffer(MemoryKind::host, kCtrlBytes, 0);
  ctrl_rx_.buffer = Buffer(MemoryKind::host, kCtrlBytes, 0);
  if (mr_local_) {
    register_region(ctrl_tx_, FI_SEND | FI_RECV, 100 + static_cast<std::uint64_t>(rank_) * 10);
    register_region(ctrl_rx_, FI_SEND | FI_RECV, 101 + static_cast<std::uint64_t>(rank_) * 10);
  }
}

void FabricBackend::register_region(Region& region, std::uint64_t access, std::uint64_t key) {
  iovec iov{region.buffer.data(), region.buffer.size()};
  fi_mr_attr attr{};
  attr.mr_iov = &iov;
  attr.iov_count = 1;
  attr.access = access;
  attr.requested_key = key;
  attr.iface = region.buffer.iface();
  if (region.buffer.kind() == MemoryKind::cuda) attr.device.cuda = region.buffer.device();
  const int rc = fi_mr_regattr(domain_, &attr, 0, &region.mr);
  if (rc != 0) {
    region.mr = nullptr;
    fail(
        fmt::format("fi_mr_regattr of {} bytes of {} memory", region.buffer.size(), fabric::name(region.buffer.kind())),
        rc);
  }
  region.desc = fi_mr_desc(region.mr);
}

void FabricBackend::close_all() noexcept {
  auto close = [](auto*& f) {
    if (f != nullptr) fi_close(&f->fid);
    f = nullptr;
  };
  close(ep_);
  for (Region* r : {&send_, &recv_, &ctrl_tx_, &ctrl_rx_}) {
    close(r->mr);
    r->desc = nullptr;
  }
  close(av_);
  close(txcq_);
  close(rxcq_);
  close(domain_);
  close(fabric_);
  if (info_ != nullptr) fi_freeinfo(info_);
  info_ = nullptr;
}

std::string FabricBackend::local_address() const {
  std::string name(256, '\0');
  std::size_t len = name.size();
  int rc = fi_getname(&ep_->fid, name.data(), &len);
  if (rc == -FI_ETOOSMALL) {
    name.resize(len);
    rc = fi_getname(&ep_->fid, name.data(), &len);
  }
  if (rc != 0) fail("fi_getname", rc);
  name.resize(len);
  return name;
}

void FabricBackend::connect(const std::string& peer_address) {
  const int n = fi_av_insert(av_, peer_address.data(), 1, &peer_, 0, nullptr);
  if (n != 1) {
    throw BackendError(fmt::format("fi_av_insert: provider {} cannot use the peer's address ({})", provider_,
                                   n < 0 ? fi_strerror(-n) : "address rejected"));
  }
}

std::string FabricBackend::probe(double timeout_s) {
  // No watchdog runs yet: progress() enforces this deadline, also while a post is refused (-FI_EAGAIN,
  // e.g. a connection that never comes up).
  probe_deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                           std::chrono::duration<double>(timeout_s));
  std::string why;
  try {
    const std::uint64_t rx_target = rx_done_ + 1;
    post_recv(ctrl_rx_.buffer.data(), kCtrlMessage, ctrl_rx_.desc, kTagProbe);
    post_send(ctrl_tx_.buffer.data(), kCtrlMessage, ctrl_tx_.desc, kTagProbe);
    while (rx_done_ < rx_target || tx_done_ < tx_posted_) progress();
  } catch (const ProbeTimeout&) {
    why = fmt::format("no answer from the peer within {} s over provider {}", timeout_s, provider_);
  } catch (const std::exception& e) {
    why = e.what();
  }
  probe_deadline_.reset();
  return why;
}

nlohmann::json FabricBackend::describe() const {
  nlohmann::json j = describe_info(*info_);
  j["messages"] = tagged_ ? "tagged" : "msg";
  j["rma_used"] = rma_;
  j["memory"] = fabric::name(memory_);
  j["window"] = window_;
  j["inject_threshold_bytes"] = inject_size_;
  j["notes"] = notes_;
  if (core_provider(provider_) == "efa") {
    // The raw PCI ids of the EFA devices on this host; the generation comes from the instance profile.
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : system::read_efa_devices()) {
      devices.push_back({{"name", d.name},
                         {"vendor_id", d.vendor_id},
                         {"device_id", d.device_id},
                         {"subsystem_id", d.subsystem_id},
                         {"pci_address", d.pci_address}});
    }
    j["efa_devices"] = devices;
  }
  return j;
}

nlohmann::json FabricBackend::metadata() const {
  return {{"fabric", {{"path", core_provider(provider_)}, {"provider", provider_}}}};
}

std::vector<proof::PathKind> FabricBackend::provable_paths() const {
  return {proof::PathKind::efa, proof::PathKind::tcp, proof::PathKind::shm, proof::PathKind::net};
}

proof::ProofResult FabricBackend::prove_path(const proof::RequiredPath& required, int /*rails*/,
                                             bool /*final_window*/) {
  const std::string core = core_provider(provider_);
  proof::ProofResult out;
  out.source = "libfabric provider";
  out.carried_by = core;
  out.evidence = {{"provider", provider_}, {"core_provider", core}};
  bool proven = false;
  switch (required.kind) {
    case proof::PathKind::efa:
      proven = core == "efa";
      break;
    case proof::PathKind::tcp:
      proven = core == "tcp" || core == "sockets";
      break;
    case proof::PathKind::shm:
      proven = core == "shm";
      break;
    case proof::PathKind::net:
      proven = core != "shm" && !core.empty();
      break;
    case proof::PathKind::nvlink:
      proven = false;
      break;
  }
  // The provider says nothing of which interface carried the bytes.
  if (!required.interface.empty()) proven = false;
  out.verdict = proven ? proof::Verdict::proven : proof::Verdict::failed;
  out.message =
      proven ? fmt::format("{} proven: the endpoint opened provider {}", proof::to_string(required), provider_)
             : fmt::format("--require-path {}: the endpoint opened provider {} (core {}){}", proof::to_string(required),
                           provider_, core, required.interface.empty() ? "" : ", which names no interface");
  return out;
}

bool FabricBackend::receives(Op op) const {
  switch (op) {
    case Op::fabric_pingpong:
    case Op::fabric_bibw:
      return true;
    case Op::fabric_bw:
    case Op::fabric_write:
      return rank_ == 1;
    case Op::fabric_read:
      return rank_ == 0;
    default:
      return false;
  }
}

std::optional<std::string> FabricBackend::unsupported(const CaseSpec& c) const {
  if (info(c.op).is_collective()) return std::string("not a fabric test");
  if (c.nranks != 2) return std::string("fabric tests run between exactly 2 ranks");
  if ((c.op == Op::fabric_write || c.op == Op::fabric_read) && !rma_) {
    return fmt::format("provider {} does not offer FI_RMA", provider_);
  }
  if (c.layout.bytes > max_msg_size_) {
    return fmt::format("sizes above the provider's max_msg_size ({} bytes, provider {})", max_msg_size_, provider_);
  }
  return std::nullopt;
}

std::uint64_t FabricBackend::memory_budget_bytes(int ranks_on_node) const {
#ifdef CCBENCH_HAVE_CUDA
  if (memory_ == MemoryKind::cuda) {
    std::size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess) return free_bytes;
    return 0;
  }
#endif
  const std::uint64_t available = system::memory_available_bytes();
  return available / static_cast<std::uint64_t>(std::max(ranks_on_node, 1));
}

void FabricBackend::allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) {
  send_.buffer = Buffer(memory_, static_cast<std::size_t>(std::max<std::uint64_t>(send_bytes, 1)), cuda_device_);
  recv_.buffer = Buffer(memory_, static_cast<std::size_t>(std::max<std::uint64_t>(recv_bytes, 1)), cuda_device_);
  staging_.assign(static_cast<std::size_t>(std::max(send_bytes, recv_bytes)), 0);
  const bool need_mr = mr_local_ || rma_ || memory_ == MemoryKind::cuda;
  if (need_mr) {
    std::uint64_t access = FI_SEND | FI_RECV;
    if (rma_) access |= FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    register_region(send_, access, 1 + static_cast<std::uint64_t>(rank_) * 10);
    register_region(recv_, access, 2 + static_cast<std::uint64_t>(rank_) * 10);
  }
  if (!rma_) return;
  if (!exchange_) throw BackendError("RMA needs the peer's memory keys, but no exchange was set up");
  auto addr = [&](const Region& r) {
    return virt_addr_ ? static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(r.buffer.data())) : 0;
  };
  const std::uint64_t mine[4] = {addr(send_), fi_mr_key(send_.mr), addr(recv_), fi_mr_key(recv_.mr)};
  const std::string theirs = exchange_(std::string(reinterpret_cast<const char*>(mine), sizeof mine));
  if (theirs.size() != sizeof mine) throw BackendError("RMA key exchange: malformed answer from the peer");
  std::uint64_t peer[4];
  std::memcpy(peer, theirs.data(), sizeof peer);
  remote_send_addr_ = peer[0];
  remote_send_key_ = peer[1];
  remote_recv_addr_ = peer[2];
  remote_recv_key_ = peer[3];
}

void FabricBackend::fill(const CaseSpec& c, const pattern::Params& p) {
  const std::size_t n = static_cast<std::size_t>(c.layout.bytes);
  for (std::size_t i = 0; i < n; ++i) staging_[i] = static_cast<std::uint8_t>(pattern::data_value(p, c.rank, i));
  send_.buffer.copy_from_host(staging_.data(), n);
  std::fill_n(staging_.begin(), n, kPoison);
  recv_.buffer.copy_from_host(staging_.data(), n);
}

std::uint64_t FabricBackend::verify(const CaseSpec& c, const pattern::Params& p) {
  if (!receives(c.op)) return 0;
  const std::size_t n = static_cast<std::size_t>(c.layout.bytes);
  recv_.buffer.copy_to_host(staging_.data(), n);
  const int sender = 1 - c.rank;
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    wrong += staging_[i] != static_cast<std::uint8_t>(pattern::data_value(p, sender, i)) ? 1 : 0;
  }
  return wrong;
}

void FabricBackend::corrupt_output_for_test(const CaseSpec& c) {
  if (!receives(c.op) || c.layout.bytes == 0) return;
  recv_.buffer.copy_to_host(staging_.data(), 1);
  staging_[0] = kPoison;
  recv_.buffer.copy_from_host(staging_.data(), 1);
}

void FabricBackend::launch(const CaseSpec& c) { run_op(c, 1, true); }

double FabricBackend::time_batch_us(const CaseSpec& c, int batch) {
  const auto start = std::chrono::steady_clock::now();
  run_op(c, batch, false);
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  // The engine divides by `batch`: what remains is half a round trip, or one message of a window.
  return c.op == Op::fabric_pingpong ? us / 2.0 : us / static_cast<double>(window_);
}

void FabricBackend::run_op(const CaseSpec& c, int reps, bool checking) {
  current_op_ = c.op;
  current_bytes_ = static_cast<std::size_t>(c.layout.bytes);
  switch (c.op) {
    case Op::fabric_pingpong:
      pingpong(current_bytes_, reps);
      break;
    case Op::fabric_bw:
      bw(current_bytes_, reps);
      break;
    case Op::fabric_bibw:
      bibw(current_bytes_, reps);
      break;
    case Op::fabric_write:
    case Op::fabric_read:
      rma(c.op, current_bytes_, reps, checking);
      break;
    default:
      throw BackendError(fmt::format("{} is not a fabric test", ccbench::name(c.op)));
  }
}

// Like fi_pingpong: the receive for the next message is posted before the reply goes out, small
// messages are injected (no completion), larger ones wait for their transmit completion.
void FabricBackend::pingpong(std::size_t bytes, int reps) {
  void* rbuf = recv_.buffer.data();
  const void* sbuf = send_.buffer.data();
  if (rank_ == 0) {
    for (int i = 0; i < reps; ++i) {
      const std::uint64_t target = rx_done_ + 1;
      post_recv(rbuf, bytes, recv_.desc, kTagData);
      post_send(sbuf, bytes, send_.desc, kTagData);
      wait_tx_all();
      wait_rx(target);
    }
  } else {
    post_recv(rbuf, bytes, recv_.desc, kTagData);
    for (int i = 0; i < reps; ++i) {
      wait_rx(rx_posted_);
      if (i + 1 < reps) post_recv(rbuf, bytes, recv_.desc, kTagData);
      post_send(sbuf, bytes, send_.desc, kTagData);
      wait_tx_all();
    }
  }
}

// osu_bw's shape: a window of sends, then one acknowledgement; the receiver re-posts its receives
// for the next window before acknowledging, so data never arrives unexpected.
void FabricBackend::bw(std::size_t bytes, int reps) {
  void* rbuf = recv_.buffer.data();
  const void* sbuf = send_.buffer.data();
  if (rank_ == 0) {
    for (int r = 0; r < reps; ++r) {
      const std::uint64_t target = rx_done_ + 1;
      post_recv(ctrl_rx_.buffer.data(), kCtrlMessage, ctrl_rx_.desc, kTagAck);
      for (int w = 0; w < window_; ++w) post_send(sbuf, bytes, send_.desc, kTagData);
      wait_tx_all();
      wait_rx(target);
    }
  } else {
    for (int w = 0; w < window_; ++w) post_recv(rbuf, bytes, recv_.desc, kTagData);
    for (int r = 0; r < reps; ++r) {
      wait_rx(rx_posted_);
      if (r + 1 < reps) {
        for (int w = 0; w < window_; ++w) post_recv(rbuf, bytes, recv_.desc, kTagData);
      }
      post_send(ctrl_tx_.buffer.data(), kCtrlMessage, ctrl_tx_.desc, kTagAck);
      wait_tx_all();
    }
  }
}

void FabricBackend::bibw(std::size_t bytes, int reps) {
  void* rbuf = recv_.buffer.data();
  const void* sbuf = send_.buffer.data();
  for (int r = 0; r < reps; ++r) {
    for (int w = 0; w < window_; ++w) post_recv(rbuf, bytes, recv_.desc, kTagData);
    for (int w = 0; w < window_; ++w) post_send(sbuf, bytes, send_.desc, kTagData);
    wait_rx(rx_posted_);
    wait_tx_all();
  }
}

// Rank 0 drives windows of RMA operations; rank 1 only progresses until rank 0 says it is done.
// For the data check the writes are delivery-complete, so the target's memory holds the data
// before the "done" message can arrive.
void FabricBackend::rma(Op op, std::size_t bytes, int reps, bool checking) {
  if (rank_ == 0) {
    for (int r = 0; r < reps; ++r) {
      for (int w = 0; w < window_; ++w) post_rma(op, bytes, checking && op == Op::fabric_write);
      wait_tx_all();
    }
    post_send(ctrl_tx_.buffer.data(), kCtrlMessage, ctrl_tx_.desc, kTagDone);
    wait_tx_all();
  } else {
    post_recv(ctrl_rx_.buffer.data(), kCtrlMessage, ctrl_rx_.desc, kTagDone);
    wait_rx(rx_posted_);
  }
}

fi_context2* FabricBackend::next_context(std::vector<fi_context2>& pool, std::size_t& index) {
  fi_context2* ctx = &pool[index];
  index = (index + 1) % pool.size();
  return ctx;
}

void FabricBackend::post_send(const void* buf, std::size_t len, void* desc, std::uint64_t tag) {
  const bool inject = len < inject_size_;  // strictly below, as fi_pingpong
  for (;;) {
    ssize_t rc = 0;
    if (inject) {
      rc = tagged_ ? fi_tinject(ep_, buf, len, peer_, tag) : fi_inject(ep_, buf, len, peer_);
    } else {
      void* ctx = next_context(tx_ctx_, tx_ctx_next_);
      rc = tagged_ ? fi_tsend(ep_, buf, len, desc, peer_, tag, ctx) : fi_send(ep_, buf, len, desc, peer_, ctx);
    }
    if (rc == 0) break;
    if (rc != -FI_EAGAIN)
      fail(tagged_ ? (inject ? "fi_tinject" : "fi_tsend") : (inject ? "fi_inject" : "fi_send"), static_cast<int>(rc));
    progress();
  }
  if (!inject) ++tx_posted_;
}

void FabricBackend::post_recv(void* buf, std::size_t len, void* desc, std::uint64_t tag) {
  for (;;) {
    void* ctx = next_context(rx_ctx_, rx_ctx_next_);
    const ssize_t rc = tagged_ ? fi_trecv(ep_, buf, len, desc, FI_ADDR_UNSPEC, tag, 0, ctx)
                               : fi_recv(ep_, buf, len, desc, FI_ADDR_UNSPEC, ctx);
    if (rc == 0) break;
    if (rc != -FI_EAGAIN) fail(tagged_ ? "fi_trecv" : "fi_recv", static_cast<int>(rc));
    progress();
  }
  ++rx_posted_;
}

void FabricBackend::post_rma(Op op, std::size_t len, bool deliver) {
  const bool write = op == Op::fabric_write;
  const bool inject = write && !deliver && len < inject_size_;
  for (;;) {
    ssize_t rc = 0;
    if (inject) {
      rc = fi_inject_write(ep_, send_.buffer.data(), len, peer_, remote_recv_addr_, remote_recv_key_);
    } else if (write && deliver && deliver_complete_ok_) {
      iovec iov{send_.buffer.data(), len};
      void* desc = send_.desc;
      fi_rma_iov rma{remote_recv_addr_, len, remote_recv_key_};
      fi_msg_rma msg{};
      msg.msg_iov = &iov;
      msg.desc = &desc;
      msg.iov_count = 1;
      msg.addr = peer_;
      msg.rma_iov = &rma;
      msg.rma_iov_count = 1;
      msg.context = next_context(tx_ctx_, tx_ctx_next_);
      rc = fi_writemsg(ep_, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
      if (rc == -FI_EBADFLAGS || rc == -FI_ENOSYS || rc == -FI_EOPNOTSUPP) {
        deliver_complete_ok_ = false;  // fall back to ordered completion (noted in the result file)
        notes_.push_back("FI_DELIVERY_COMPLETE refused: the write check relies on message ordering");
        continue;
      }
    } else if (write) {
      rc = fi_write(ep_, send_.buffer.data(), len, send_.desc, peer_, remote_recv_addr_, remote_recv_key_,
                    next_context(tx_ctx_, tx_ctx_next_));
    } else {
      rc = fi_read(ep_, recv_.buffer.data(), len, recv_.desc, peer_, remote_send_addr_, remote_send_key_,
                   next_context(tx_ctx_, tx_ctx_next_));
    }
    if (rc == 0) break;
    if (rc != -FI_EAGAIN) fail(write ? (inject ? "fi_inject_write" : "fi_write") : "fi_read", static_cast<int>(rc));
    progress();
  }
  if (!inject) ++tx_posted_;
}

void FabricBackend::poll(fid_cq* cq, std::uint64_t& done) {
  fi_cq_entry entries[16];
  const ssize_t n = fi_cq_read(cq, entries, 16);
  if (n > 0) {
    done += static_cast<std::uint64_t>(n);
  } else if (n == -FI_EAVAIL) {
    completion_error(cq, cq == txcq_ ? "transmit" : "receive");
  } else if (n != -FI_EAGAIN) {
    fail("fi_cq_read", static_cast<int>(n));
  }
}

void FabricBackend::progress() {
  poll(txcq_, tx_done_);
  poll(rxcq_, rx_done_);
  if (probe_deadline_ && std::chrono::steady_clock::now() > *probe_deadline_) throw ProbeTimeout();
}

// Busy polling with no deadline of its own: a peer that stalls is caught by the watchdog thread,
// which ends the process (exit 3) with the finished sizes saved.
void FabricBackend::wait_tx_all() {
  while (tx_done_ < tx_posted_) poll(txcq_, tx_done_);
}

void FabricBackend::wait_rx(std::uint64_t target) {
  while (rx_done_ < target) poll(rxcq_, rx_done_);
}

void FabricBackend::fail(const std::string& what, int rc) const {
  const int err = rc < 0 ? -rc : rc;
  std::string text = fmt::format("{}: {} ({})", what, fi_strerror(err), rc);
  if (current_bytes_ > 0)
    text = fmt::format("{} of {} bytes over {}: {}", ccbench::name(current_op_), current_bytes_, provider_, text);
  if (is_peer_error(err)) throw PeerFailure(text);
  throw BackendError(text);
}

void FabricBackend::completion_error(fid_cq* cq, const char* which) const {
  fi_cq_err_entry err{};
  const ssize_t rc = fi_cq_readerr(cq, &err, 0);
  if (rc < 0) fail("fi_cq_readerr", static_cast<int>(rc));
  char buf[256] = {};
  const char* detail = fi_cq_strerror(cq, err.prov_errno, err.err_data, buf, sizeof buf);
  const std::string text =
      fmt::format("{} of {} bytes over {}: {} completion error: {} (provider: {})", ccbench::name(current_op_),
                  current_bytes_, provider_, which, fi_strerror(err.err), detail != nullptr ? detail : "");
  if (is_peer_error(err.err)) throw PeerFailure(text);
  throw BackendError(text);
}

}  // namespace ccbench::fabric
