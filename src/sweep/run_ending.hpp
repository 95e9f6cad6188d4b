// The one ending ladder of every measuring command (`run`, `fabric`, `congestion`, `checkpoint`):
// how a rank ends when the run cannot go on, and which exit code that is (README "Exit codes",
// docs/result-format.md):
//
//   hang (the watchdog's -T, or the set-up deadline)    3, status "incomplete"
//   termination signal                                  128+signal, status "interrupted"
//   failed peer (the channel threw PeerFailure, or
//   rank 0 finds a peer on its host gone)               4, status "failed" or "incomplete"
//   any other error after set-up                        2, status "failed"
//
// Every path saves what finished first: rank 0 finishes every result writer it was given (rows
// kept), then runs the command's own last step (congestion's summary), then the rank ends. The
// measure/ frame owns one per command; the session (sweep/session) and congestion's phase loop
// (congestion_run/) are handed it and never end a rank themselves.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "sweep/peer_table.hpp"
#include "sweep/result_writer.hpp"
#include "sweep/watchdog.hpp"

namespace ccbench {

// The set-up (backend init, agreement, peer table, header) is watched too, with a deadline of
// max(-T, this): a hang there ends in exit 3 instead of burning the allocation.
inline constexpr double kSetupTimeoutFloorS = 120.0;

// The status a result file is finished with on each rung (docs/result-format.md).
enum class EndStatus { incomplete, interrupted, failed };
std::string_view name(EndStatus status);

class RunEnding {
 public:
  // Ends the rank with the code; never returns. The process's is std::_Exit (the launcher sees the
  // code); a test with ranks as threads ends the thread instead (throws RankEnded).
  using Exit = std::function<void(int exit_code)>;
  [[noreturn]] static void exit_process(int exit_code);

  // `peer_wait`: how long a rank other than 0 waits after a hang or signal for rank 0 to save the
  // results (end()'s comment says why).
  RunEnding(std::string command, int rank, Exit exit = &RunEnding::exit_process,
            std::chrono::milliseconds peer_wait = std::chrono::seconds(2));
  RunEnding(const RunEnding&) = delete;
  RunEnding& operator=(const RunEnding&) = delete;
  ~RunEnding();

  const std::string& command() const { return command_; }
  int rank() const { return rank_; }

  // What the ladder saves and consults; each may be set or changed while the run goes on (the
  // watchdog's thread may end the rank at any moment).
  void add_writer(ResultWriter* writer);  // rank 0: finished on every rung, in the order added
  void set_peers(const PeerTable* peers);
  void set_backend(Backend* backend);  // aborted before the files are written (closes endpoints)
  // Runs on rank 0 after the writers are finished, on every rung (congestion's summary file).
  using LastStep = std::function<void(EndStatus status, int exit_code, const std::string& message)>;
  void set_last_step(LastStep step);
  // The run's objects are going away: the ladder no longer saves or consults any of the above.
  void forget();

  // The set-up watchdog: from arm_setup() to setup_done() a step that does not return within
  // max(timeout_s, the floor) ends the process with exit 3 ("... (before the first measurement)";
  // a thread stuck in a collective cannot be ended alone); nothing is measured yet, so nothing is
  // saved. The floor is kSetupTimeoutFloorS unless set (tests lower it).
  void arm_setup(double timeout_s);
  void setup_done();
  void set_setup_floor_s(double floor_s) { setup_floor_s_ = floor_s; }

  // A hang or a signal (the watchdog's handler) or a failed peer: saves and ends. A dead peer that
  // rank 0 sees on its host turns any of them into exit 4.
  [[noreturn]] void end(const Watchdog::Event& event);
  // The exception being handled ends the rank: PeerFailure as a failed peer (exit 4), anything
  // else as exit 2 with "<message> during <during>". Call from a catch block only.
  [[noreturn]] void end_current_exception(const std::string& during);
  // A measuring body under the ladder: its exit code, or the rank ends from the exception it throws.
  int guard(const std::function<int()>& body, const std::function<std::string()>& during);

 private:
  [[noreturn]] void finish_and_exit(int exit_code, EndStatus status, const std::string& message, bool durable,
                                    bool wait_for_root);
  std::vector<ResultWriter*> writers();

  std::string command_;
  int rank_;
  Exit exit_;
  std::chrono::milliseconds peer_wait_;
  double setup_floor_s_ = kSetupTimeoutFloorS;
  std::mutex mutex_;  // writers_ and last_step_
  std::vector<ResultWriter*> writers_;
  LastStep last_step_;
  std::atomic<const PeerTable*> peers_{nullptr};
  std::atomic<Backend*> backend_{nullptr};
  std::mutex ending_;  // one rung at a time: the watchdog and the main thread may both end the rank
  std::optional<Watchdog> setup_watchdog_;
};

// Thrown by a test's Exit so a rank that is a thread ends its thread, not the process.
struct RankEnded {
  int exit_code;
};

}  // namespace ccbench
