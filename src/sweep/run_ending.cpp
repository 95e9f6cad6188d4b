#include "sweep/run_ending.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/error.hpp"

namespace ccbench {

void end_run(std::string_view command, const Watchdog::Event& event, int rank, ResultWriter* writer,
             const PeerTable& peers, Backend* backend) {
  int exit_code = event.exit_code;
  std::string message = event.message;
  std::string status = event.signal != 0 ? "interrupted" : "incomplete";
  if (rank == 0) {
    // A dead peer explains both a hang and the launcher's SIGTERM: report it as such (exit 4).
    if (const auto dead = peers.describe_failed_peers(); !dead.empty()) {
      exit_code = exit_code::peer_failed;
      status = "failed";
      message = "peer failed: " + dead + "; " + message;
    } else if (const auto stopped = peers.describe_stopped_peers(); !stopped.empty()) {
      message += "; " + stopped;
    } else if (event.signal == SIGTERM) {
      // mpirun ends the whole job with SIGTERM when any rank dies; a peer on another host may be why.
      message += " (if the launcher sent it, a peer may have failed: see the launcher's output)";
    }
  }
  if (backend != nullptr) backend->abort();
  bool saved = false;
  if (rank == 0 && writer != nullptr) {
    // Save first: after a SIGTERM the launcher sends SIGKILL about a second later. Before the
    // first result an existing file is left as it was (finish says so and returns false).
    saved = writer->finish(status, exit_code, message, /*durable=*/false);
  }
  std::fprintf(stderr, "%.*s: rank %d: %s\n", static_cast<int>(command.size()), command.data(), rank,
               message.c_str());
  if (saved && !writer->path().empty()) {
    std::fprintf(stderr, "%.*s: %zu finished results kept in %s (status %s)\n", static_cast<int>(command.size()),
                 command.data(), writer->result_count(), writer->path().c_str(), status.c_str());
  }
  if (rank != 0) {
    // Ranks that hold no results wait a moment for rank 0 to save them. On a hang every rank's
    // watchdog fires at about the same time and the first to exit makes mpirun kill the rest. On a
    // signal the launcher sends it to every rank at once: a peer of rank 0's host that exited at
    // once was seen by rank 0 as a failed peer ("failed", exit 4) where the user had interrupted
    // the run (measured in CI: 1 of 2 wrapped SIGINTs). The launcher's SIGKILL may end the wait.
    std::fflush(stderr);
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(exit_code);
}

}  // namespace ccbench
