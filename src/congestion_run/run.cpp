// The phase loop of `ccbench congestion` (docs/congestion.md). The measured set runs its tests
// alone (isolated phase: the congestors idle) and while the other ranks run a congestor pattern in
// a loop (congested phase). The measured set's "done" reaches the congestors through a
// non-blocking barrier on the world channel that they poll between their ops
// (ControlChannel::start_barrier), and they agree on the op after which all of them stop.
#include "congestion_run/run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "congestion/phases.hpp"
#include "congestion_run/instruments.hpp"
#include "congestion_run/phase_files.hpp"
#include "core/error.hpp"
#include "sweep/describe_run.hpp"
#include "sweep/engine.hpp"
#include "sweep/peer_table.hpp"
#include "sweep/watchdog.hpp"

namespace ccbench::congestion_run {
namespace {

using namespace ccbench::congestion;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Waits for a pending barrier without spinning a core (ranks with nothing to do in a phase).
void wait_quietly(PendingBarrier& pending) {
  while (!pending.test()) std::this_thread::sleep_for(std::chrono::microseconds(500));
}

// This rank's times in one phase (each rank has only its own part; the maxima are printed).
struct PhaseTimes {
  std::uint64_t congestor_ops = 0;
  double stop_wait_ms = 0;
  double measured_ms = 0;
  double congestor_op_ms = 0;
};

int usage(ControlChannel& world, const std::string& message) {
  if (world.is_root()) std::fprintf(stderr, "%s: %s\n", kCommand, message.c_str());
  return exit_code::usage;
}

// One run of the phase plan over instruments and files already set up.
class PhaseRun {
 public:
  PhaseRun(ControlChannel& world, RunEnding& ending, const RunConfig& config, const CongestionOptions& opt,
           const Layout& layout, Instruments& instruments, const PeerTable& peers, PhaseWriters& writers,
           const ResultFile& header, Printer& printer)
      : world_(world),
        ending_(ending),
        config_(config),
        opt_(opt),
        layout_(layout),
        in_(instruments),
        peers_(peers),
        writers_(writers),
        header_(header),
        printer_(printer),
        rank_(world.rank()),
        measured_(layout.is_measured(rank_)) {
    phase_config_.trials = 1;
  }

  int run();

 private:
  void run_phase(const PhaseSpec& phase);
  PhaseTimes measure(const PhaseSpec& phase, const std::string& pattern);
  PhaseTimes congest(const PhaseSpec& phase);
  void idle();
  void report_phase(const PhaseSpec& phase, const std::string& pattern, PhaseTimes times);
  int finish_complete();
  void hand_to_ending();
  void write_summary_at_end(EndStatus status, int exit_code);

  ControlChannel& world_;
  RunEnding& ending_;
  const RunConfig& config_;
  const CongestionOptions& opt_;
  const Layout& layout_;
  Instruments& in_;
  const PeerTable& peers_;
  PhaseWriters& writers_;
  const ResultFile& header_;
  Printer& printer_;
  const int rank_;
  const bool measured_;
  RunConfig phase_config_ = config_;
  PhaseObserver observer_;
  SweepObserver quiet_;
  std::optional<Watchdog> watchdog_;  // last: its handler ends through ending_
};

// What the ending ladder saves on rank 0, whichever rung ends the run: every phase file (each
// says the same, even those without a row yet: a finished writer takes no later row, so none can
// start its file as "incomplete" after this), then the summary with the impacts of the trials that
// finished both phases.
void PhaseRun::hand_to_ending() {
  ending_.set_peers(&peers_);
  if (rank_ != 0) return;
  for (auto& pair : writers_) {
    for (auto& w : pair) ending_.add_writer(w.get());
  }
  ending_.set_last_step(
      [this](EndStatus status, int exit_code, const std::string&) { write_summary_at_end(status, exit_code); });
}

void PhaseRun::write_summary_at_end(EndStatus status, int exit_code) {
  if (config_.json_path.empty()) return;
  const auto json = summary_json(header_, config_, opt_, layout_, writers_, observer_, impact_rows(observer_, layout_),
                                 std::nullopt, exit_code, std::string(name(status)));
  write_summary(phase_path(config_.json_path, "impact"), json.dump(1) + "\n", false);
}

// The measured set: one engine run of its tests into the phase's file, then the barrier that
// tells the congestors to stop.
PhaseTimes PhaseRun::measure(const PhaseSpec& phase, const std::string& pattern) {
  const auto phase_start = Clock::now();
  const auto p = static_cast<std::size_t>(phase.pattern);
  observer_.writer = writers_.empty() || !world_.is_root() ? nullptr : writers_[p][phase.congested ? 1 : 0].get();
  observer_.trial = phase.trial;
  observer_.pattern = pattern;
  observer_.congested = phase.congested;
  observer_.line.clear();
  watchdog_->set_trial_offset(phase.trial);
  ending_.set_backend(in_.measured_backend.get());
  Engine(phase_config_, in_.plan, *in_.measured_backend, *in_.measured_channel, *watchdog_,
         in_.measured_channel->is_root() ? static_cast<SweepObserver&>(observer_) : quiet_)
      .run();
  watchdog_->arm(Phase::finish);
  PhaseTimes times;
  const auto done = Clock::now();
  times.measured_ms = std::chrono::duration<double, std::milli>(done - phase_start).count();
  auto pending = world_.start_barrier();
  wait_quietly(*pending);
  times.stop_wait_ms = ms_since(done);
  return times;
}

// An active congestor: runs the pattern until the measured set is done. After every op the active
// congestors agree whether any of them has seen the barrier complete, so all stop after the same op.
PhaseTimes PhaseRun::congest(const PhaseSpec& phase) {
  const auto p = static_cast<std::size_t>(phase.pattern);
  Backend& backend = *in_.pattern_backends[p];
  ending_.set_backend(&backend);
  auto pending = world_.start_barrier();
  const CaseSpec& c = in_.pattern_cases[p];
  watchdog_->set_case(phase.trial, c.op, c.layout.bytes, false);
  PhaseTimes times;
  double busy_ms = 0;
  while (true) {
    watchdog_->arm(Phase::sample, times.congestor_ops);
    const auto op_start = Clock::now();
    backend.launch(c);
    backend.synchronize();
    busy_ms += ms_since(op_start);
    ++times.congestor_ops;
    if (in_.active_channels[p]->max_all(pending->test() ? 1.0 : 0.0) > 0) break;
  }
  times.congestor_op_ms = busy_ms / static_cast<double>(times.congestor_ops);
  watchdog_->arm(Phase::finish);
  pending->wait();
  return times;
}

// Idle until the measured set is done: a phase has no -T bound (it is several tests), and a
// measured rank that hangs is caught by its own watchdog, which ends the job.
void PhaseRun::idle() {
  watchdog_->disarm();
  auto pending = world_.start_barrier();
  wait_quietly(*pending);
}

// The maxima over all ranks; rank 0 prints the phase's line and keeps it for the summary.
void PhaseRun::report_phase(const PhaseSpec& phase, const std::string& pattern, PhaseTimes times) {
  // The ops the congestors ran in the phase (the largest count of any group's ranks).
  const double group_ops = world_.max_all(static_cast<double>(times.congestor_ops));
  const double stop_wait_ms = world_.max_all(times.stop_wait_ms);
  const double measured_ms = world_.max_all(times.measured_ms);
  const double op_ms = world_.max_all(times.congestor_op_ms);  // the slowest group's mean op time
  watchdog_->disarm();
  if (!world_.is_root()) return;
  printer_.phase({phase.trial, pattern, phase.congested, observer_.line, group_ops, op_ms, stop_wait_ms});
  std::lock_guard lock(observer_.mutex);
  observer_.phases.push_back({{"trial", phase.trial},
                              {"pattern", pattern},
                              {"phase", phase_name(phase.congested)},
                              {"measured_ms", measured_ms},
                              {"congestor_ops", group_ops},
                              {"congestor_op_ms", op_ms},
                              {"stop_wait_ms", stop_wait_ms}});
}

void PhaseRun::run_phase(const PhaseSpec& phase) {
  const auto p = static_cast<std::size_t>(phase.pattern);
  const std::string pattern(name(layout_.patterns[p].pattern));
  watchdog_->arm(Phase::setup);
  world_.barrier();
  PhaseTimes times;
  if (measured_) {
    times = measure(phase, pattern);
  } else if (phase.congested && in_.active[p]) {
    times = congest(phase);
  } else {
    idle();
  }
  report_phase(phase, pattern, times);
}

// Rank 0, after every phase: the impacts, the gate, every file finished and the summary written.
// Every phase was measured: a file that cannot be written is kept elsewhere (the writer and
// write_summary say where) and the exit says "measured, not saved" unless a worse code holds.
int PhaseRun::finish_complete() {
  std::vector<ImpactRow> rows = impact_rows(observer_, layout_);
  std::optional<GateResult> gate;
  if (opt_.max_impact_value) gate = apply_gate(rows, *opt_.max_impact_value);
  printer_.table(rows);
  const bool wrong = observer_.wrong > 0;
  int exit = wrong ? exit_code::data_check_failed : (gate ? gate->exit_code : exit_code::ok);
  const std::optional<std::string> error =
      wrong ? std::optional<std::string>(fmt::format("data check failed: {} wrong elements", observer_.wrong))
            : std::nullopt;
  bool saved = true;
  for (auto& pair : writers_) {
    for (auto& w : pair) saved = w->finish("complete", exit, error) && saved;
  }
  printer_.gate_and_method(gate, opt_.max_impact_value.value_or(0), config_.trials);
  if (!config_.json_path.empty()) {
    const fs::path path = phase_path(config_.json_path, "impact");
    const auto json = summary_json(header_, config_, opt_, layout_, writers_, observer_, rows, gate, exit, "complete");
    const fs::path written = write_summary(path, json.dump(1) + "\n", true);
    saved = saved && written == path;
    printer_.files(writers_[0][0]->path(), writers_[0][1]->path(), written);
    if (!saved && exit == exit_code::ok) exit = exit_code::not_saved;
  }
  if (wrong) printer_.data_check_failed(observer_.wrong);
  printer_.flush();
  return exit;
}

int PhaseRun::run() {
  ending_.set_backend(in_.measured_backend.get());
  hand_to_ending();
  watchdog_.emplace(config_.timeout_s, [this](const Watchdog::Event& event) { ending_.end(event); });
  if (world_.is_root()) printer_.start(layout_, config_.trials, opt_.congestor);
  int exit = exit_code::ok;
  try {
    for (const PhaseSpec& phase : phase_plan(config_.trials, static_cast<int>(layout_.patterns.size()))) {
      run_phase(phase);
    }
    if (world_.is_root()) {
      exit = finish_complete();
      ending_.set_last_step(nullptr);  // the complete summary is written: a later failure keeps it
    }
    exit = world_.broadcast(exit);
  } catch (const std::exception&) {
    ending_.end_current_exception(watchdog_->describe());
  }
  watchdog_.reset();
  ending_.forget();  // the writers, the peer table and the backends go with this run
  in_.release();
  return exit;
}

// The measured set's metadata (rank 0 is always measured) and, on rank 0, every file opened.
// Returns the agreed -J/--json error, "" when all is well.
std::string open_files(ControlChannel& world, const RunConfig& config, const CongestionOptions& opt,
                       const Layout& layout, Instruments& in, ResultFile& header,
                       PhaseWriters& writers) {
  RunConfig header_config = config;
  header_config.ops = {Op::allreduce, Op::alltoall};
  header_config.sizes = SizeRange{std::min(opt.lat, opt.bw), std::max(opt.lat, opt.bw), 2.0, 0};
  if (layout.is_measured(world.rank())) {
    header = describe_run(header_config, *in.measured_channel, *in.measured_backend, in.plan, opt.command);
  }
  std::string error;
  if (world.is_root()) error = open_phase_files(writers, header, config, opt, layout);
  return world.broadcast(error);
}

}  // namespace

MakeBackend registry_backends() {
  return [](std::string_view name, const BackendOptions& options) { return make_backend(name, options); };
}

int run_congestion(ControlChannel& world, RunEnding& ending, const RunConfig& config, const CongestionOptions& opt,
                   const Layout& layout, Printer& printer, const MakeBackend& make_backend) {
  // The set-up (every set's channel and backend, the peer table, the files) is watched: a hang
  // there is exit 3, not a held allocation. The phase loop has its own watchdog.
  ending.arm_setup(config.timeout_s);
  struct SetupDoneAtReturn {
    RunEnding& ending;
    ~SetupDoneAtReturn() { ending.setup_done(); }
  } setup_done_at_return{ending};
  Instruments in;
  try {
    in = set_up_instruments(world, config, opt, layout, make_backend);
  } catch (const AgreedSetupError& e) {
    return usage(world, e.what());
  }
  const PeerTable peers = PeerTable::exchange(world);
  // The result files: one per pattern and phase kind, each an ordinary result file of the
  // measured set (compare one pattern's isolated file with its congested file directly).
  PhaseWriters writers(layout.patterns.size());
  ResultFile header;
  if (const std::string error = open_files(world, config, opt, layout, in, header, writers); !error.empty()) {
    return usage(world, error);
  }
  ending.setup_done();
  PhaseRun run(world, ending, config, opt, layout, in, peers, writers, header, printer);
  return run.run();
}

}  // namespace ccbench::congestion_run
