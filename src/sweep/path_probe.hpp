// --require-path in the sweep (docs/path-proof.md): the probe that proves, seconds into a run and
// again over the whole run, that the bytes crossed the fabric the user requires. Every op the
// backend launches is counted (CountingBackend); rank 0 turns the counts into the bytes each host
// had to receive from other hosts (proof::needed_rx_bytes) and sets them beside what the hosts'
// devices received (interface counters, EFA counters), or asks the backend for its own evidence
// (NCCL's transports, the libfabric provider). A failed proof stops the sweep with exit 6; the rows
// already measured are kept and marked.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "backends/backend.hpp"
#include "core/groups.hpp"
#include "core/path_proof.hpp"
#include "sweep/channel.hpp"
#include "sweep/engine.hpp"

namespace ccbench {

// Where a host's device counters come from: injected, so the probe is tested on numbers written by
// hand (the process's are /proc/net/dev and /sys/class/infiniband).
struct DeviceCounterSource {
  std::function<std::vector<proof::DeviceBytes>()> network;  // interfaces other than loopback
  std::function<std::vector<proof::DeviceBytes>()> efa;      // EFA devices' ports
  static DeviceCounterSource of_this_host();
};

class PathProbe {
 public:
  // `hostnames`: every world rank's host (rank 0; ignored elsewhere); `layout`: --groups (each group
  // runs the same case at once). `backend` is the real one (its provable_paths and prove_path).
  PathProbe(ControlChannel& channel, proof::RequiredPath required, int rails, Backend& backend,
            std::vector<std::string> hostnames, groups::Layout layout,
            DeviceCounterSource source = DeviceCounterSource::of_this_host(), proof::CounterRule rule = {});

  // Throws UsageError naming --require-path when neither the backend nor the counters can prove
  // the path on this backend (nvlink on MPI, efa where no EFA device exists ...).
  static void check_provable(const proof::RequiredPath& required, int rails, const Backend& backend);

  // Collective: the counters' baseline (call before the first op).
  void start();
  // This rank launched `ops` ops of `c` (rank 0 counts; the sweep is the same on every rank).
  void count(const CaseSpec& c, std::uint64_t ops);
  // Collective: the verdict over the run so far, while no earlier check decided it; afterwards the
  // decided verdict. `final_window`: the run is over (undecided becomes failed) and the counters
  // are read once more whatever was decided.
  proof::ProofResult check(bool final_window);
  bool decided() const { return decided_; }
  // fabric.proof (rank 0): the requirement, the probe's verdict and the whole run's.
  nlohmann::json to_json() const;

 private:
  std::vector<std::uint64_t> needed_per_host(const CaseSpec& c, bool peer_rx) const;
  std::vector<proof::DeviceBytes> read_devices() const;
  std::vector<std::vector<proof::DeviceBytes>> gather_counters() const;
  proof::ProofResult check_counters(bool final_window);

  ControlChannel& channel_;
  proof::RequiredPath required_;
  int rails_ = 0;
  Backend& backend_;
  bool backend_proves_ = false;
  groups::Layout layout_;
  DeviceCounterSource source_;
  proof::CounterRule rule_;
  std::vector<std::string> hosts_;                         // distinct, in rank order of first appearance (rank 0)
  std::vector<int> host_of_rank_;                          // world rank -> index into hosts_ (rank 0)
  std::vector<std::vector<proof::DeviceBytes>> baseline_;  // per host (rank 0)
  std::vector<std::uint64_t> off_host_rx_;                 // per host, so far (rank 0)
  std::vector<std::uint64_t> peer_rx_;
  // A case's bytes per host and op (off-host, from peers), by what sets them: the sweep's cases
  // repeat, and working them out is O(ranks x hosts).
  using CaseKey = std::tuple<int, std::uint64_t, int, int, int, const void*, int, int>;
  std::map<CaseKey, std::pair<std::vector<std::uint64_t>, std::vector<std::uint64_t>>> per_case_;
  bool decided_ = false;
  std::optional<proof::ProofResult> probe_;  // the first decisive check
  std::optional<proof::ProofResult> run_;    // the whole run's
};

// A backend that counts every op it launches for the probe and forwards everything else.
class CountingBackend final : public Backend {
 public:
  // `inner` outlives this wrapper; the command's hooks keep seeing `inner` (fabric casts it to its
  // own type), the engine sees the wrapper.
  CountingBackend(Backend& inner, PathProbe& probe) : inner_(&inner), probe_(probe) {}

  std::string_view name() const override { return inner_->name(); }
  std::string_view clock() const override { return inner_->clock(); }
  std::optional<std::string> unsupported(const CaseSpec& c) const override { return inner_->unsupported(c); }
  std::uint64_t send_bytes_needed(const CaseSpec& c) const override { return inner_->send_bytes_needed(c); }
  std::uint64_t recv_bytes_needed(const CaseSpec& c) const override { return inner_->recv_bytes_needed(c); }
  std::uint64_t memory_budget_bytes(int ranks_on_node) const override {
    return inner_->memory_budget_bytes(ranks_on_node);
  }
  void allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) override {
    inner_->allocate(send_bytes, recv_bytes);
  }
  void fill(const CaseSpec& c, const pattern::Params& p) override { inner_->fill(c, p); }
  void launch(const CaseSpec& c) override {
    inner_->launch(c);
    probe_.count(c, 1);
  }
  void synchronize() override { inner_->synchronize(); }
  double time_batch_us(const CaseSpec& c, int batch) override {
    const double us = inner_->time_batch_us(c, batch);
    probe_.count(c, static_cast<std::uint64_t>(batch));
    return us;
  }
  std::uint64_t verify(const CaseSpec& c, const pattern::Params& p) override { return inner_->verify(c, p); }
  void corrupt_output_for_test(const CaseSpec& c) override { inner_->corrupt_output_for_test(c); }
  void abort() noexcept override { inner_->abort(); }
  nlohmann::json metadata() const override { return inner_->metadata(); }
  nlohmann::json final_metadata() override { return inner_->final_metadata(); }
  std::vector<proof::PathKind> provable_paths() const override { return inner_->provable_paths(); }
  proof::ProofResult prove_path(const proof::RequiredPath& required, int rails, bool final_window) override {
    return inner_->prove_path(required, rails, final_window);
  }

 private:
  Backend* inner_;
  PathProbe& probe_;
};

}  // namespace ccbench

namespace ccbench {

// The probe as the engine's check: after each size until it decides; a failed proof ends the
// sweep with exit 6 (rank 0's message names the host, what carried the bytes and how many).
class PathProofCheck final : public SweepCheck {
 public:
  explicit PathProofCheck(PathProbe& probe) : probe_(probe) {}
  std::optional<SweepStop> after_size(int trial, Op op, std::span<const ResultRow> rows) override;

 private:
  PathProbe& probe_;
};

}  // namespace ccbench
