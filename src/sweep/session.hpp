// One run session: what every measuring command (`ccbench run`, `ccbench fabric`, and the commands
// built on them) does between parsing its flags and exiting, in one place:
//
//   backend (hook) -> agree -> plan -> agree -> memory check -> peer table -> header (hooks)
//   -> result writer (checked, nothing written yet) -> watchdog -> engine with the console
//   reporter (hook) -> peak RSS and final metadata -> result file finished -> summary line
//
// What goes wrong ends through the ladder it is handed (sweep/run_ending.hpp: a hang or a signal,
// a failed peer, any other error, the partial file kept), which the command's frame owns
// (measure/frame.hpp). Every step that can fail on some ranks only is agreed through the control
// channel before the next, so no rank waits on a peer that gave up. The frame owns MPI and the
// command its flags; the flags the commands share are parsed by sweep/session_flags.hpp.
// docs/architecture.md describes the hooks.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "core/result.hpp"
#include "sweep/channel.hpp"
#include "sweep/engine.hpp"
#include "sweep/peer_table.hpp"
#include "sweep/plan.hpp"
#include "sweep/result_writer.hpp"
#include "sweep/run_config.hpp"
#include "sweep/run_ending.hpp"

namespace ccbench {

class PathProbe;  // sweep/path_probe.hpp

struct SessionHooks {
  std::string wrong_unit = "elements";  // "wrong elements" / "wrong bytes" in the summary
  // Whether the watchdog's -T covers allocate() (fabric: it exchanges RMA keys with the peer and
  // can hang). Off for run: touching gigabytes of buffers is slow on a busy host, not a hang.
  bool watch_allocate = false;
  // Creates this rank's backend (every rank). A hook with several steps that can fail on some
  // ranks only agrees after each (agree_or_throw); a plain exception is agreed by the session.
  std::function<std::unique_ptr<Backend>(ControlChannel&)> make_backend;
  // The result file's header (collective: every rank calls it; rank 0's is used).
  std::function<ResultFile(ControlChannel&, const Backend&, const Plan&)> describe;
  // Optional: adjusts rank 0's header before anything is written (fabric's section).
  std::function<void(ResultFile&, const Backend&)> adjust_header;
  // Optional: rank 0's console output. Default: ConsoleReporter with no title suffix.
  std::function<std::unique_ptr<SweepObserver>(const Plan&, const Backend&)> observer;
  // Optional: notes rank 0 prints before measuring ("ccbench fabric: note: ...").
  std::function<std::vector<std::string>(const Backend&)> notes;
  // Optional: a check of the command's on every row (run --expect), made on every rank from rank
  // 0's header (other ranks: their own, unused) before measuring; a throw is a set-up error (exit 2).
  std::function<std::unique_ptr<SweepCheck>(ControlChannel&, const ResultFile&)> make_check;
};

class RunSession {
 public:
  RunSession(ControlChannel& channel, const RunConfig& config, SessionHooks hooks, RunEnding& ending);

  // Runs the session; returns the exit code (0 ok, 1 data check failed, 2 set-up error, 5 not
  // saved). Hangs, signals, failed peers and errors while measuring end the rank through `ending`
  // (exit 3, 128+signal, 4, 2).
  int run();

  // Prints `message` on rank 0 as "<command>: message" (the ending's command); returns exit 2.
  int usage_error(const std::string& message) const;

 private:
  std::string set_up(std::unique_ptr<Backend>& backend, Plan& plan, const groups::Layout& layout);
  std::string check_memory(const Backend& backend, const Plan& plan);
  // `backend` is what the engine drives (the probe's counting wrapper with --require-path), `own`
  // the command's backend as its hooks know it.
  int measure(Backend& backend, const Backend& own, const Plan& plan, const PeerTable& peers, ResultWriter* writer,
              const EngineGroups& groups, PathProbe* probe, SweepCheck* command_check);
  int finish(ResultWriter& writer, const Plan& plan, const SweepTotals& totals, double peak_rss,
             const nlohmann::json& final_metadata);

  ControlChannel& channel_;
  const RunConfig& config_;
  SessionHooks hooks_;
  RunEnding& ending_;
};

// The memory check's arithmetic: bytes of the largest case's buffers, saturated at UINT64_MAX
// instead of wrapping (a sum that wraps would pass any check). Exposed for unit tests.
std::uint64_t buffer_bytes_needed(const Plan& plan);

}  // namespace ccbench
