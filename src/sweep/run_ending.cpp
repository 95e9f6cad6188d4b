#include "sweep/run_ending.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>

#include "core/deadlines.hpp"
#include "core/error.hpp"

namespace ccbench {

std::string_view name(EndStatus status) {
  switch (status) {
    case EndStatus::incomplete:
      return "incomplete";
    case EndStatus::interrupted:
      return "interrupted";
    case EndStatus::failed:
      return "failed";
  }
  return "failed";
}

void RunEnding::exit_process(int exit_code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(exit_code);
}

RunEnding::RunEnding(std::string command, int rank, Exit exit, std::chrono::milliseconds peer_wait)
    : command_(std::move(command)), rank_(rank), exit_(std::move(exit)), peer_wait_(peer_wait) {}

RunEnding::~RunEnding() = default;

void RunEnding::add_writer(ResultWriter* writer) {
  if (writer == nullptr) return;
  std::lock_guard lock(mutex_);
  writers_.push_back(writer);
}

void RunEnding::set_peers(const PeerTable* peers) { peers_ = peers; }
void RunEnding::set_backend(Backend* backend) { backend_ = backend; }

void RunEnding::set_last_step(LastStep step) {
  std::lock_guard lock(mutex_);
  last_step_ = std::move(step);
}

void RunEnding::forget() {
  std::lock_guard lock(mutex_);
  writers_.clear();
  last_step_ = nullptr;
  peers_ = nullptr;
  backend_ = nullptr;
}

std::vector<ResultWriter*> RunEnding::writers() {
  std::lock_guard lock(mutex_);
  return writers_;
}

void RunEnding::arm_setup(double timeout_s) {
  // Setup has collectives too (agreement, the peer table, a backend's own init such as NCCL's): a
  // dead link or a stopped peer must end the run, not hang it. Nothing is measured yet, so the
  // handler only says where and exits 3. The deadline is at least the floor, since -T is sized for
  // one collective and a large job's set-up takes longer than that.
  setup_watchdog_.reset();
  setup_watchdog_.emplace(setup_watchdog_s(timeout_s, setup_floor_s_), [this](const Watchdog::Event& event) {
    std::fprintf(stderr, "%s: rank %d: %s (before the first measurement)\n", command_.c_str(), rank_,
                 event.message.c_str());
    exit_process(event.exit_code);
  });
  setup_watchdog_->arm(Phase::setup);
}

void RunEnding::setup_done() { setup_watchdog_.reset(); }

void RunEnding::end(const Watchdog::Event& event) {
  int exit_code = event.exit_code;
  std::string message = event.message;
  EndStatus status = event.signal != 0 ? EndStatus::interrupted : EndStatus::incomplete;
  const PeerTable* peers = peers_.load();
  if (rank_ == 0 && peers != nullptr) {
    // A dead peer explains both a hang and the launcher's SIGTERM: report it as such (exit 4).
    if (const auto dead = peers->describe_failed_peers(); !dead.empty()) {
      exit_code = exit_code::peer_failed;
      status = EndStatus::failed;
      message = "peer failed: " + dead + "; " + message;
    } else if (const auto stopped = peers->describe_stopped_peers(); !stopped.empty()) {
      message += "; " + stopped;
    } else if (event.signal == SIGTERM) {
      // mpirun ends the whole job with SIGTERM when any rank dies; a peer on another host may be why.
      message += " (if the launcher sent it, a peer may have failed: see the launcher's output)";
    }
  }
  if (Backend* backend = backend_.load(); backend != nullptr) backend->abort();
  // Save without fsync: after a SIGTERM the launcher sends SIGKILL about a second later. Ranks that
  // hold no results wait a moment for rank 0 to save them. On a hang every rank's watchdog fires at
  // about the same time and the first to exit makes mpirun kill the rest. On a signal the launcher
  // sends it to every rank at once: a peer of rank 0's host that exited at once was seen by rank 0
  // as a failed peer ("failed", exit 4) where the user had interrupted the run (measured in CI: 1
  // of 2 wrapped SIGINTs). The launcher's SIGKILL may end the wait.
  finish_and_exit(exit_code, status, message, /*durable=*/false, /*wait_for_root=*/true);
}

void RunEnding::end_current_exception(const std::string& during) {
  try {
    throw;
  } catch (const RankEnded&) {
    throw;  // a thread rank already ended
  } catch (const PeerFailure& e) {
    end({exit_code::peer_failed, 0, std::string("peer failed: ") + e.what()});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: rank %d: %s during %s\n", command_.c_str(), rank_, e.what(), during.c_str());
    finish_and_exit(exit_code::usage, EndStatus::failed, e.what(), /*durable=*/true, /*wait_for_root=*/false);
  }
}

int RunEnding::guard(const std::function<int()>& body, const std::function<std::string()>& during) {
  try {
    return body();
  } catch (const RankEnded&) {
    throw;
  } catch (const std::exception&) {
    end_current_exception(during());
  }
}

void RunEnding::finish_and_exit(int exit_code, EndStatus status, const std::string& message, bool durable,
                                bool wait_for_root) {
  std::lock_guard one_rung(ending_);
  const bool quiet = status == EndStatus::failed && !wait_for_root;  // the error was printed with where
  if (rank_ == 0) {
    // Before the first result an existing file is left as it was (finish says so and returns false).
    // A writer already finished keeps its first ending (finish is idempotent).
    const std::string status_name(name(status));
    std::vector<ResultWriter*> saved;
    for (ResultWriter* writer : writers()) {
      if (writer->finish(status_name, exit_code, message, durable)) saved.push_back(writer);
    }
    LastStep last_step;
    {
      std::lock_guard lock(mutex_);
      last_step = last_step_;
    }
    if (last_step) {
      try {
        last_step(status, exit_code, message);
      } catch (const std::exception& e) {  // the rank must still end, with the rung's code
        std::fprintf(stderr, "%s: rank %d: %s\n", command_.c_str(), rank_, e.what());
      }
    }
    if (!quiet) std::fprintf(stderr, "%s: rank %d: %s\n", command_.c_str(), rank_, message.c_str());
    for (ResultWriter* writer : saved) {
      if (writer->path().empty()) continue;
      std::fprintf(stderr, "%s: %zu finished results kept in %s (status %s)\n", command_.c_str(),
                   writer->result_count(), writer->path().c_str(), status_name.c_str());
    }
  } else if (!quiet) {
    std::fprintf(stderr, "%s: rank %d: %s\n", command_.c_str(), rank_, message.c_str());
  }
  if (rank_ != 0 && wait_for_root) {
    std::fflush(stderr);
    std::this_thread::sleep_for(peer_wait_);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  exit_(exit_code);
  std::_Exit(exit_code);  // an Exit that returned
}

}  // namespace ccbench
