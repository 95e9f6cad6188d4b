#include "sweep/session.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>

#include "core/error.hpp"
#include "core/host_load_note.hpp"
#include "sweep/console_reporter.hpp"
#include "sweep/path_probe.hpp"
#include "sweep/peer_table.hpp"
#include "sweep/result_writer.hpp"
#include "sweep/watchdog.hpp"
#include "system/host_load.hpp"

namespace ccbench {
namespace {

// Rank 0: every result goes to the result file first, then to the console.
class RecordingObserver final : public SweepObserver {
 public:
  RecordingObserver(ResultWriter& writer, SweepObserver& console) : writer_(writer), console_(console) {}
  void on_op_begin(int trial, Op op) override { console_.on_op_begin(trial, op); }
  void on_result(const ResultRow& row) override {
    writer_.append(row);
    console_.on_result(row);
  }
  void on_size_done(int trial, Op op, std::span<const ResultRow> rows) override {
    console_.on_size_done(trial, op, rows);
  }

 private:
  ResultWriter& writer_;
  SweepObserver& console_;
};

// The console's one line about --groups, before the tables, e.g.
// "# groups mod:2: 2 concurrent groups of 2 ranks: [0,2] on ccb-h0,ccb-h1; [1,3] on ccb-h0,ccb-h1"
std::string describe_groups(const nlohmann::json& layout) {
  std::string out = fmt::format(
      "# groups {}: {} concurrent groups of {} ranks, each on up to {} node(s):", layout["spec"].get<std::string>(),
      layout["count"].get<int>(), layout["ranks_per_group"].get<int>(), layout["nodes_per_group"].get<int>());
  const auto& ranks = layout["world_ranks"];
  const auto& hosts = layout["hosts"];
  for (std::size_t g = 0; g < ranks.size(); ++g) {
    out += fmt::format("{} [{}] on {}", g == 0 ? "" : ";", fmt::join(ranks[g].get<std::vector<int>>(), ","),
                       fmt::join(hosts[g].get<std::vector<std::string>>(), ","));
  }
  return out + "\n";
}

double peak_rss_bytes() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

}  // namespace

std::uint64_t buffer_bytes_needed(const Plan& plan) {
  std::uint64_t need = 0;
  if (__builtin_add_overflow(plan.send_bytes, plan.recv_bytes, &need)) return std::numeric_limits<std::uint64_t>::max();
  return need;
}

RunSession::RunSession(ControlChannel& channel, const RunConfig& config, SessionHooks hooks, RunEnding& ending)
    : channel_(channel), config_(config), hooks_(std::move(hooks)), ending_(ending) {}

int RunSession::usage_error(const std::string& message) const {
  if (channel_.is_root()) std::fprintf(stderr, "%s: %s\n", ending_.command().c_str(), message.c_str());
  return exit_code::usage;
}

// Backend and plan, agreed on by every rank before anything is measured or written. Returns the
// error every rank agreed on, or "".
std::string RunSession::set_up(std::unique_ptr<Backend>& backend, Plan& plan, const groups::Layout& layout) {
  try {
    std::string error;
    try {
      backend = hooks_.make_backend(channel_);
    } catch (const AgreedSetupError&) {
      throw;
    } catch (const std::exception& e) {
      error = e.what();
    }
    agree_or_throw(channel_, error);
    try {
      // With --groups every case is one group's: its size and this rank's rank within it.
      plan = make_plan(config_, *backend, layout.ranks_per_group, layout.rank_in_group(channel_.rank()));
      // What this backend can prove is the same answer on every rank.
      if (config_.require_path) PathProbe::check_provable(*config_.require_path, config_.require_rails, *backend);
    } catch (const std::exception& e) {
      error = e.what();
    }
    agree_or_throw(channel_, error);
  } catch (const AgreedSetupError& e) {
    return e.what();
  }
  return "";
}

// The buffers of the largest case per rank must fit before we start (collective). Returns the
// error naming the flag, or "".
std::string RunSession::check_memory(const Backend& backend, const Plan& plan) {
  const std::uint64_t need = buffer_bytes_needed(plan);
  const std::uint64_t budget = backend.memory_budget_bytes(channel_.local_size());
  const bool overflows = need == std::numeric_limits<std::uint64_t>::max();
  const bool fits = !overflows && (budget == 0 || need <= budget);
  if (channel_.max_all(fits ? 0.0 : 1.0) == 0) return "";
  const std::uint64_t largest = config_.sizes.max_bytes;
  const std::string flag = config_.sizes.min_bytes == config_.sizes.max_bytes
                               ? fmt::format("-b/--min-bytes and -e/--max-bytes {}", format_bytes(largest))
                               : fmt::format("-e/--max-bytes {}", format_bytes(largest));
  if (overflows) return fmt::format("{}: the buffers of the largest case exceed 2^64 bytes per rank", flag);
  return fmt::format(
      "{}: the largest case needs {:.1f} MiB of buffers per rank, but only {:.1f} MiB is available per rank ({} "
      "ranks on this node)",
      flag, static_cast<double>(need) / 1048576.0, static_cast<double>(budget) / 1048576.0, channel_.local_size());
}

int RunSession::run() {
  // Set-up has collectives too (agreement, the peer table, a backend's own init): the ending's
  // set-up watchdog ends a hang there in exit 3.
  ending_.arm_setup(config_.timeout_s);
  struct SetupDoneAtReturn {
    RunEnding& ending;
    ~SetupDoneAtReturn() { ending.setup_done(); }
  } setup_done_at_return{ending_};  // an early exit 2 must not leave it watching MPI_Finalize
  // --groups: the layout (pure arithmetic, the same on every rank) and this rank's group channel,
  // which the engine uses for each group's own time (the backend makes its own communicator).
  groups::Layout layout;
  try {
    layout = groups::make_layout(config_.groups, channel_.size());
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  std::unique_ptr<ControlChannel> group_channel;
  if (layout.grouped()) group_channel = channel_.split(layout.group_of(channel_.rank()));
  std::unique_ptr<Backend> backend;
  Plan plan;
  if (std::string error = set_up(backend, plan, layout); !error.empty()) return usage_error(error);
  if (std::string error = check_memory(*backend, plan); !error.empty()) return usage_error(error);

  const PeerTable peers = PeerTable::exchange(channel_);
  // --require-path: the probe counts every op the backend launches (docs/path-proof.md).
  std::unique_ptr<PathProbe> probe;
  std::unique_ptr<CountingBackend> counting;
  if (config_.require_path) {
    probe = std::make_unique<PathProbe>(channel_, *config_.require_path, config_.require_rails, *backend,
                                        peers.hostnames(), layout);
    counting = std::make_unique<CountingBackend>(*backend, *probe);
  }
  ResultFile header = hooks_.describe(channel_, *backend, plan);
  EngineGroups engine_groups{&layout, group_channel.get(), 1};
  if (layout.grouped() && channel_.is_root()) {
    header.config["groups"] = groups::layout_json(layout, groups::group_hosts(layout, peers.hostnames()));
    engine_groups.nodes_per_group = header.config["groups"]["nodes_per_group"].get<int>();
  }
  // The writer checks the path now and writes nothing until the first result: an exit 2 from here
  // on, or a run killed before its first result, leaves an existing file as it was.
  std::unique_ptr<ResultWriter> writer;
  std::string output_error;
  if (channel_.is_root()) {
    try {
      if (hooks_.adjust_header) hooks_.adjust_header(header, *backend);
      writer = std::make_unique<ResultWriter>(header, config_.json_path);
    } catch (const std::exception& e) {
      output_error = fmt::format("-J/--json {}: {}", config_.json_path, e.what());
    }
  }
  if (const std::string error = channel_.broadcast(output_error); !error.empty()) return usage_error(error);
  std::unique_ptr<SweepCheck> command_check;
  if (hooks_.make_check) {
    std::string error;
    try {
      command_check = hooks_.make_check(channel_, header);
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (const auto failed = channel_.agree_on_error(error)) return usage_error(*failed);
  }

  if (channel_.is_root()) {
    const char* command = ending_.command().c_str();
    if (hooks_.notes) {
      for (const auto& note : hooks_.notes(*backend)) std::fprintf(stderr, "%s: note: %s\n", command, note.c_str());
    }
    for (const auto& skip : plan.skipped)
      std::fprintf(stderr, "%s: skipped %s: %s\n", command, skip.what.c_str(), skip.reason.c_str());
    if (layout.grouped()) std::fputs(describe_groups(header.config["groups"]).c_str(), stdout);
  }
  ending_.setup_done();  // measure() has its own watchdog, whose ending saves what finished
  Backend& measured = counting ? static_cast<Backend&>(*counting) : *backend;
  const int exit =
      measure(measured, *backend, plan, peers, writer.get(), engine_groups, probe.get(), command_check.get());
  counting.reset();
  backend.reset();  // close the backend's endpoints while the peers are still there
  return exit;
}

// The sweep and its end: the engine with the observers, peak memory and the backend's final
// metadata, the finished file and the summary line; the ending ladder for what goes wrong.
int RunSession::measure(Backend& backend, const Backend& own, const Plan& plan, const PeerTable& peers,
                        ResultWriter* writer, const EngineGroups& groups, PathProbe* probe, SweepCheck* command_check) {
  ending_.set_peers(&peers);
  ending_.set_backend(&backend);
  ending_.add_writer(writer);
  Watchdog watchdog(config_.timeout_s, [this](const Watchdog::Event& event) { ending_.end(event); });

  int exit = exit_code::ok;
  try {
    if (hooks_.watch_allocate) watchdog.arm(Phase::setup);
    backend.allocate(plan.send_bytes, plan.recv_bytes);
    // Was something else running on this host? Rank 0 samples its host before and after (docs/host-load.md).
    system::HostLoadSnapshot load_at_start;
    if (channel_.is_root()) load_at_start = system::sample_host_load();
    if (probe != nullptr) {
      watchdog.arm(Phase::setup);
      probe->start();
    }
    std::optional<PathProofCheck> proof_check;
    if (probe != nullptr) proof_check.emplace(*probe);
    SweepTotals totals;
    if (channel_.is_root()) {
      std::unique_ptr<SweepObserver> console =
          hooks_.observer ? hooks_.observer(plan, own) : std::make_unique<ConsoleReporter>(plan, config_);
      RecordingObserver output(*writer, *console);
      Engine engine(config_, plan, backend, channel_, watchdog, output);
      engine.set_groups(groups);
      if (proof_check) engine.add_check(*proof_check);
      if (command_check != nullptr) engine.add_check(*command_check);
      totals = engine.run();
    } else {
      SweepObserver quiet;
      Engine engine(config_, plan, backend, channel_, watchdog, quiet);
      engine.set_groups(groups);
      if (proof_check) engine.add_check(*proof_check);
      if (command_check != nullptr) engine.add_check(*command_check);
      totals = engine.run();
    }
    watchdog.arm(Phase::finish);
    if (probe != nullptr && !totals.stop) {
      // Again over the whole run: a path proven at the probe that changed later fails here.
      const proof::ProofResult run_proof = probe->check(true);
      if (run_proof.verdict != proof::Verdict::proven) {
        totals.stop = SweepStop{exit_code::path_not_proven, run_proof.message};
      }
    }
    if (probe != nullptr && channel_.is_root()) {
      writer->merge_fabric({{"proof", probe->to_json()}});
      if (!totals.stop) std::printf("# path: %s\n", probe->check(false).message.c_str());
    }
    const double peak_rss = channel_.max_all(peak_rss_bytes());
    const nlohmann::json final_metadata = backend.final_metadata();  // collective
    watchdog.disarm();
    if (channel_.is_root()) {
      const system::HostLoadSnapshot load_at_end = system::sample_host_load();
      auto ours = system::own_processes(load_at_end, static_cast<int>(::getpid()));
      // The runs of one program that started several at once on this host (docs/host-load.md).
      if (const char* owner = std::getenv("CCBENCH_LOAD_OWNER"); owner && *owner)
        ours.merge(system::processes_with_environment(load_at_end, std::string("CCBENCH_LOAD_OWNER=") + owner));
      writer->merge_system(
          {{"host_load", system::host_load_json(load_at_start, load_at_end, ours, system::cores_of(ours))}});
      exit = finish(*writer, plan, totals, peak_rss, final_metadata);
    }
    exit = channel_.broadcast(exit);
  } catch (const std::exception&) {
    ending_.end_current_exception(watchdog.describe());
  }
  ending_.forget();  // the peer table, the writer and the backend go with the caller
  std::fflush(stdout);
  return exit;
}

// Rank 0: the finished result file and the summary line. Returns the exit code.
int RunSession::finish(ResultWriter& writer, const Plan& plan, const SweepTotals& totals, double peak_rss,
                       const nlohmann::json& final_metadata) {
  writer.set_peak_rss_bytes(static_cast<std::uint64_t>(peak_rss));
  writer.merge_software(final_metadata);
  int exit = totals.wrong > 0 ? exit_code::data_check_failed : exit_code::ok;
  std::optional<std::string> error;
  if (totals.wrong > 0) error = fmt::format("data check failed: {} wrong {}", totals.wrong, hooks_.wrong_unit);
  std::string status = "complete";
  if (totals.stop) {
    // A check ended the sweep (a path not proven): the rows are kept, and marked when the proof
    // failed, since their numbers are not the fabric's the run names.
    if (exit == exit_code::ok) exit = totals.stop->exit_code;
    if (!error) error = totals.stop->message;
    status = "failed";
    if (totals.stop->exit_code == exit_code::path_not_proven) writer.mark_rows("path_proof", "failed");
  }
  const bool saved = writer.finish(status, exit, error);
  std::printf(
      "# %zu results, %zu met the CI target (±%.1f%%), %llu wrong %s; peak memory %.1f MiB per rank (buffers %.1f "
      "MiB)\n",
      totals.results, totals.ci_met, config_.target_ci * 100.0, static_cast<unsigned long long>(totals.wrong),
      hooks_.wrong_unit.c_str(), peak_rss / 1048576.0, static_cast<double>(buffer_bytes_needed(plan)) / 1048576.0);
  // The CI target is precision inside this one launch; launches differ by more (docs/method.md).
  std::printf(
      "# the ± CIs are precision inside this launch; across launches compare separate launches "
      "(scripts/launches.sh)\n");
  if (const auto busy = busy_host_note(writer.system())) std::printf("# %s\n", busy->c_str());
  if (!config_.json_path.empty() && saved) std::printf("# result file: %s\n", config_.json_path.c_str());
  if (config_.json_path.empty()) std::printf("# no result file written (-J PATH writes one)\n");
  if (totals.wrong > 0 || totals.stop) std::fprintf(stderr, "%s: %s\n", ending_.command().c_str(), error->c_str());
  if (!config_.json_path.empty() && !saved && writer.result_count() > 0) {
    // Measured but not saved where asked (exit 5 unless the data check already failed).
    if (const auto kept = writer.fallback_path(); !kept.empty()) {
      std::printf("# result file: %s (could not write %s)\n", kept.c_str(), config_.json_path.c_str());
    }
    return exit == exit_code::ok ? exit_code::not_saved : exit;
  }
  return exit;
}

}  // namespace ccbench
