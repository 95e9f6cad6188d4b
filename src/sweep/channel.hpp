// The control channel between ranks: barriers, broadcasts, gathers and reductions that carry
// decisions and aggregated samples, never measured bytes, and always outside timed regions.
// The engine, the run session and the backends that need a side channel (NCCL's unique id, the
// libfabric address exchange) talk through this interface only, so they are unit-tested with
// LocalChannel (one rank, in process) while MpiChannel (sweep/mpi_channel.hpp) serves real runs.
//
// Header-only on purpose: backends/ may include it without linking sweep/ (docs/architecture.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ccbench {

// A barrier begun without blocking (ControlChannel::start_barrier): the ranks that are done with a
// phase can signal the ranks still busy in a loop of their own, which poll between their steps.
class PendingBarrier {
 public:
  virtual ~PendingBarrier() = default;
  // Whether every rank of the channel has begun the barrier (never blocks; drives progress).
  virtual bool test() = 0;
  // Blocks until every rank has begun it.
  virtual void wait() = 0;
};

class ControlChannel {
 public:
  virtual ~ControlChannel() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank and rank count within this node (GPU selection, memory budget per rank).
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  bool is_root() const { return rank() == 0; }

  // Collective calls: every rank makes them in the same order. A failure of the channel (a peer
  // gone) throws PeerFailure.
  virtual void barrier() = 0;
  // Rank 0's value on every rank.
  virtual int broadcast(int value) = 0;
  virtual std::string broadcast(const std::string& value) = 0;
  virtual double broadcast(double value) = 0;
  // Every rank's string, in rank order, on rank 0 (empty elsewhere).
  virtual std::vector<std::string> gather_to_root(const std::string& value) = 0;
  virtual double max_all(double value) = 0;
  virtual std::uint64_t sum_all(std::uint64_t value) = 0;
  // Element-wise max (or mean) over ranks of `values`, result on rank 0 only.
  virtual void max_to_root(std::vector<double>& values) = 0;
  virtual void mean_to_root(std::vector<double>& values) = 0;

  // Collective: the ranks that pass the same `color` (>= 0) form a new channel, ranked in this
  // channel's rank order (concurrent groups, `ccbench congestion`'s measured and congestor sets).
  // local_rank/local_size stay those of the node, not of the group.
  virtual std::unique_ptr<ControlChannel> split(int color) = 0;

  // Collective, non-blocking: begins a barrier and returns at once (MPI_Ibarrier). Every rank
  // begins it in the same order as the channel's other collectives and makes no other call on
  // this channel until its test() was true or wait() returned (`ccbench congestion`: the measured
  // set's "done" reaches the congestors, who poll it between their ops).
  virtual std::unique_ptr<PendingBarrier> start_barrier() = 0;

  // Every rank passes its error ("" = ok); all learn whether any failed. The message is combined
  // on rank 0 ("rank 1: ..." for other ranks' distinct messages) and returned on every rank.
  std::optional<std::string> agree_on_error(const std::string& error) {
    const std::vector<std::string> all = gather_to_root(error);
    std::string combined;
    for (std::size_t r = 0; r < all.size(); ++r) {
      if (all[r].empty()) continue;
      if (r > 0 && all[r] == all[0]) continue;  // the same message from several ranks once
      if (!combined.empty()) combined += "; ";
      if (r > 0) combined += "rank " + std::to_string(r) + ": ";
      combined += all[r];
    }
    if (max_all(error.empty() ? 0.0 : 1.0) == 0) return std::nullopt;
    combined = broadcast(combined);
    if (combined.empty()) combined = "another rank failed (see its message)";
    return combined;
  }
};

// A set-up failure every rank already agreed on (thrown identically on every rank), so whoever
// catches it reports it without agreeing again.
class AgreedSetupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Agrees on `error` ("" = ok on this rank); throws AgreedSetupError with the combined message on
// every rank when any rank failed.
inline void agree_or_throw(ControlChannel& channel, const std::string& error) {
  if (auto failed = channel.agree_on_error(error)) throw AgreedSetupError(*failed);
}

// One rank in this process: every collective is the identity. For unit tests and for tools that
// run the engine without a launcher.
class LocalChannel final : public ControlChannel {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  void barrier() override { ++barriers_; }
  int broadcast(int value) override { return value; }
  std::string broadcast(const std::string& value) override { return value; }
  double broadcast(double value) override { return value; }
  std::vector<std::string> gather_to_root(const std::string& value) override { return {value}; }
  double max_all(double value) override { return value; }
  std::uint64_t sum_all(std::uint64_t value) override { return value; }
  void max_to_root(std::vector<double>&) override {}
  void mean_to_root(std::vector<double>&) override {}
  std::unique_ptr<ControlChannel> split(int) override { return std::make_unique<LocalChannel>(); }
  // One rank: the barrier is complete as soon as it begins.
  std::unique_ptr<PendingBarrier> start_barrier() override {
    struct Done final : PendingBarrier {
      bool test() override { return true; }
      void wait() override {}
    };
    ++barriers_;
    return std::make_unique<Done>();
  }

  // Barriers so far (the engine takes one before every sample).
  std::uint64_t barriers() const { return barriers_; }

 private:
  std::uint64_t barriers_ = 0;
};

}  // namespace ccbench
