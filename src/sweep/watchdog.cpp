#include "sweep/watchdog.hpp"

#include <limits>

#include <csignal>
#include <cstring>

#include <fmt/format.h>

namespace ccbench {
namespace {

sigset_t termination_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR1);  // Slurm's --signal=USR1@T warning before the time limit
  return set;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string_view name(Phase phase) {
  switch (phase) {
    case Phase::setup: return "setup";
    case Phase::check: return "data check";
    case Phase::warmup: return "warm-up";
    case Phase::sample: return "sample";
    case Phase::aggregate: return "aggregation";
    default: return "finish";
  }
}

void Watchdog::block_termination_signals() {
  const sigset_t set = termination_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

Watchdog::Watchdog(double timeout_s, Handler handler) : timeout_s_(timeout_s), handler_(std::move(handler)) {
  block_termination_signals();
  thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void Watchdog::set_case(int trial, Op op, std::uint64_t bytes, bool in_place) {
  trial_ = trial;
  op_ = static_cast<int>(op);
  bytes_ = bytes;
  in_place_ = in_place;
}

void Watchdog::arm(Phase phase, std::uint64_t iteration) {
  phase_ = static_cast<int>(phase);
  iteration_ = iteration;
  if (!(timeout_s_ > 0)) return;
  // -T is validated (at most kMaxTimeoutS); saturate anyway so no value can wrap the deadline.
  const std::int64_t now = now_ns();
  const double left_ns = static_cast<double>(std::numeric_limits<std::int64_t>::max() - now);
  const double want_ns = timeout_s_ * 1e9;
  deadline_ns_ = want_ns >= left_ns ? std::numeric_limits<std::int64_t>::max() : now + static_cast<std::int64_t>(want_ns);
}

void Watchdog::disarm() { deadline_ns_ = 0; }

std::string Watchdog::describe() const {
  const auto phase = static_cast<Phase>(phase_.load());
  if (op_ < 0) return fmt::format("{}", name(phase));
  return fmt::format("{} of {} bytes, {}, trial {}, iteration {} ({})", name(static_cast<Op>(op_.load())),
                     bytes_.load(), in_place_ ? "in-place" : "out-of-place", trial_.load() + trial_offset_.load() + 1, iteration_.load(),
                     name(phase));
}

void Watchdog::loop() {
  const sigset_t set = termination_signals();
  const timespec tick{0, 50'000'000};
  while (!stop_) {
    siginfo_t info{};
    const int sig = sigtimedwait(&set, &info, &tick);
    if (sig > 0) {
      handler_({128 + sig, sig, fmt::format("interrupted by {} during {}", sigabbrev_np(sig) ? fmt::format("SIG{}", sigabbrev_np(sig)) : std::to_string(sig), describe())});
      return;
    }
    const std::int64_t deadline = deadline_ns_;
    if (deadline != 0 && now_ns() > deadline) {
      handler_({3, 0, fmt::format("timeout: {} did not finish within {} s", describe(), timeout_s_)});
      return;
    }
  }
}

}  // namespace ccbench
