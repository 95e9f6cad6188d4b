// N ranks as N threads of one process, behind our own ControlChannel interface: every collective
// is an exchange of one string per rank through shared slots. For engine tests that need several
// ranks (concurrent groups) without MPI. split() makes sub-worlds the same way MpiChannel's
// MPI_Comm_split does (ranked in this channel's order). fail() stands for a rank that died: every
// collective a rank is in or starts afterwards, on this world or any split of it, throws
// PeerFailure, as MpiChannel's do when a peer is gone.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
#include "sweep/channel.hpp"

namespace ccbench::testing {

class ThreadWorld {
 public:
  explicit ThreadWorld(int size, std::shared_ptr<std::atomic<bool>> failed = std::make_shared<std::atomic<bool>>(false))
      : size_(size), slots_(static_cast<std::size_t>(size)), failed_(std::move(failed)) {}
  int size() const { return size_; }

  // A rank of this world (or of the world it was split from) is gone.
  void fail() { *failed_ = true; }

  // Every rank's value, in rank order, on every rank (an all-gather; all ranks must call it).
  std::vector<std::string> exchange(int rank, std::string value) {
    std::unique_lock lock(mutex_);
    wait(lock, [&] { return !draining_; });  // the previous round is still being read
    slots_[static_cast<std::size_t>(rank)] = std::move(value);
    if (++arrived_ == size_) {
      result_ = slots_;
      draining_ = true;
      readers_ = size_;
      ++generation_;
      cv_.notify_all();
    } else {
      const auto generation = generation_;
      wait(lock, [&] { return generation_ != generation; });
    }
    std::vector<std::string> out = result_;
    if (--readers_ == 0) {
      draining_ = false;
      arrived_ = 0;
      cv_.notify_all();
    }
    return out;
  }

  // Non-blocking barrier number `n` (each rank's n-th start_barrier): arrive without waiting, then
  // test or wait until every rank has arrived.
  void arrive(unsigned long n) {
    std::lock_guard lock(mutex_);
    ++ibarriers_[n];
    cv_.notify_all();
  }
  bool all_arrived(unsigned long n) {
    std::lock_guard lock(mutex_);
    if (*failed_) throw PeerFailure("a rank of the thread world failed");
    return ibarriers_[n] == size_;
  }
  void wait_all(unsigned long n) {
    std::unique_lock lock(mutex_);
    wait(lock, [&] { return ibarriers_[n] == size_; });
  }

  // The sub-world of split number `split` and `color` (created by the first rank that asks).
  std::shared_ptr<ThreadWorld> sub_world(int split, int color, int size) {
    std::lock_guard lock(mutex_);
    auto& world = subs_[{split, color}];
    if (!world) world = std::make_shared<ThreadWorld>(size, failed_);
    return world;
  }

 private:
  // Waits for `done`, or throws PeerFailure once a rank failed (polled: the failing rank's thread
  // may be in another world's wait).
  template <typename Done>
  void wait(std::unique_lock<std::mutex>& lock, Done done) {
    while (!done()) {
      if (*failed_) throw PeerFailure("a rank of the thread world failed");
      cv_.wait_for(lock, std::chrono::milliseconds(5));
    }
  }

  int size_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::string> slots_, result_;
  int arrived_ = 0, readers_ = 0;
  bool draining_ = false;
  unsigned long generation_ = 0;
  std::map<std::pair<int, int>, std::shared_ptr<ThreadWorld>> subs_;
  std::map<unsigned long, int> ibarriers_;
  std::shared_ptr<std::atomic<bool>> failed_;
};

class ThreadChannel final : public ControlChannel {
 public:
  ThreadChannel(std::shared_ptr<ThreadWorld> world, int rank) : world_(std::move(world)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return world_->size(); }
  int local_rank() const override { return rank_; }
  int local_size() const override { return world_->size(); }

  void barrier() override {
    ++barriers;
    world_->exchange(rank_, "");
  }
  int broadcast(int value) override { return decode<int>(world_->exchange(rank_, encode(value))[0]); }
  std::string broadcast(const std::string& value) override { return world_->exchange(rank_, value)[0]; }
  double broadcast(double value) override { return decode<double>(world_->exchange(rank_, encode(value))[0]); }
  std::vector<std::string> gather_to_root(const std::string& value) override {
    auto all = world_->exchange(rank_, value);
    if (rank_ != 0) all.clear();
    return all;
  }
  double max_all(double value) override {
    double out = value;
    for (const auto& v : world_->exchange(rank_, encode(value))) out = std::max(out, decode<double>(v));
    return out;
  }
  std::uint64_t sum_all(std::uint64_t value) override {
    std::uint64_t out = 0;
    for (const auto& v : world_->exchange(rank_, encode(value))) out += decode<std::uint64_t>(v);
    return out;
  }
  void max_to_root(std::vector<double>& values) override { reduce(values, false); }
  void mean_to_root(std::vector<double>& values) override { reduce(values, true); }
  std::unique_ptr<ControlChannel> split(int color) override {
    const auto colors = world_->exchange(rank_, encode(color));
    int new_rank = 0, new_size = 0;
    for (int r = 0; r < static_cast<int>(colors.size()); ++r) {
      if (decode<int>(colors[static_cast<std::size_t>(r)]) != color) continue;
      if (r < rank_) ++new_rank;
      ++new_size;
    }
    return std::make_unique<ThreadChannel>(world_->sub_world(splits_++, color, new_size), new_rank);
  }

  std::unique_ptr<PendingBarrier> start_barrier() override {
    struct Pending final : PendingBarrier {
      std::shared_ptr<ThreadWorld> world;
      unsigned long n = 0;
      bool test() override { return world->all_arrived(n); }
      void wait() override { world->wait_all(n); }
    };
    auto pending = std::make_unique<Pending>();
    pending->world = world_;
    pending->n = ibarriers_++;
    world_->arrive(pending->n);
    return pending;
  }

  int barriers = 0;  // barriers this rank took on this channel

 private:
  template <typename T>
  static std::string encode(const T& value) {
    return std::string(reinterpret_cast<const char*>(&value), sizeof value);
  }
  template <typename T>
  static T decode(const std::string& bytes) {
    T value{};
    std::memcpy(&value, bytes.data(), sizeof value);
    return value;
  }
  void reduce(std::vector<double>& values, bool mean) {
    const std::string mine(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
    const auto all = world_->exchange(rank_, mine);
    if (rank_ != 0) return;
    for (std::size_t i = 0; i < values.size(); ++i) {
      double acc = mean ? 0.0 : values[i];
      for (const auto& bytes : all) {
        double v = 0;
        std::memcpy(&v, bytes.data() + i * sizeof(double), sizeof v);
        acc = mean ? acc + v : std::max(acc, v);
      }
      values[i] = mean ? acc / static_cast<double>(all.size()) : acc;
    }
  }

  std::shared_ptr<ThreadWorld> world_;
  int rank_;
  int splits_ = 0;
  unsigned long ibarriers_ = 0;  // start_barrier calls so far
};

}  // namespace ccbench::testing
