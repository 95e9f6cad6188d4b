// The watchdog: one thread that ends a run that can no longer make progress, keeping what finished.
//
// It catches two things the measuring thread cannot: a collective that never returns (a hung or
// dead peer; MPI offers no way to cancel it) and termination signals (Slurm preemption, a time
// limit, Ctrl-C). Signals are blocked in every thread (block_termination_signals() before
// MPI_Init, so MPI's own threads inherit the mask) and received here with sigtimedwait, so the
// handler runs as ordinary code, not in signal context, and can write the partial result file.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "core/types.hpp"

namespace ccbench {

enum class Phase : int { setup, check, warmup, sample, aggregate, finish };
std::string_view name(Phase phase);

class Watchdog {
 public:
  struct Event {
    int exit_code;    // 3 for a timeout, 128+signal for a signal
    int signal;       // 0 for a timeout
    std::string message;
  };
  // Runs on the watchdog thread and is expected to end the process (std::_Exit / _exit).
  using Handler = std::function<void(const Event&)>;

  static void block_termination_signals();

  // timeout_s <= 0 disables the hang detection (signals are still handled).
  Watchdog(double timeout_s, Handler handler);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog();

  void set_case(int trial, Op op, std::uint64_t bytes, bool in_place);
  // Added to the trial set_case is given, in describe(): congestion runs the engine one trial per
  // phase, so the engine's trial is always 0 while the run is at trial `offset`.
  void set_trial_offset(int offset) { trial_offset_ = offset; }
  // Starts (or restarts) the clock for one blocking step.
  void arm(Phase phase, std::uint64_t iteration = 0);
  void disarm();

  // "allreduce of 1048576 bytes, in-place, trial 1, iteration 37 (sample)".
  std::string describe() const;
  double timeout_s() const { return timeout_s_; }

 private:
  void loop();

  double timeout_s_;
  Handler handler_;
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> deadline_ns_{0};  // steady clock; 0 = disarmed
  std::atomic<int> trial_{-1};
  std::atomic<int> trial_offset_{0};
  std::atomic<int> op_{-1};
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<bool> in_place_{false};
  std::atomic<int> phase_{static_cast<int>(Phase::setup)};
  std::atomic<std::uint64_t> iteration_{0};
  std::thread thread_;
};

}  // namespace ccbench
