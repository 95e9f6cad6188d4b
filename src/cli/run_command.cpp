// `ccbench run`: MPI-launched collective sweep. Wires options, discovery, the backend, the engine,
// the watchdog and the outputs together; none of the measuring happens here.
#include <fmt/format.h>
#include <mpi.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <memory>

#include "backends/backend.hpp"
#include "cli/command.hpp"
#include "cli/run_ending.hpp"
#include "cli/run_metadata.hpp"
#include "cli/run_options.hpp"
#include "core/error.hpp"
#include "core/host_load_note.hpp"
#include "report/console_table.hpp"
#include "report/progress_line.hpp"
#include "sweep/coordinator.hpp"
#include "sweep/engine.hpp"
#include "sweep/plan.hpp"
#include "sweep/result_writer.hpp"
#include "sweep/watchdog.hpp"
#include "system/host_info.hpp"
#include "system/host_load.hpp"

namespace ccbench::cli {
namespace {

// Rank 0's view of the run's output: the result file (through ResultWriter), the table on stdout
// and the progress line on stderr.
class RunOutput final : public SweepObserver {
 public:
  RunOutput(ResultWriter& writer, const Plan& plan, const RunConfig& config)
      : writer_(writer),
        progress_(plan.cases_per_trial * static_cast<std::size_t>(config.trials), config.trials),
        trials_(config.trials) {
    show_progress_ = config.progress == "always" || (config.progress == "auto" && ::isatty(STDERR_FILENO));
  }
  void on_op_begin(int trial, Op op) override {
    std::fputs(report::table_header(std::string(name(op)), trial, trials_).c_str(), stdout);
    std::fflush(stdout);
  }
  void on_result(const ResultRow& row) override {
    writer_.append(row);
    if (show_progress_) {
      std::fputs(progress_.on_result(row).c_str(), stderr);
      std::fflush(stderr);
    }
  }
  void on_size_done(int, Op, std::span<const ResultRow> rows) override {
    const ResultRow* out_of_place = nullptr;
    const ResultRow* in_place = nullptr;
    for (const auto& row : rows) (row.in_place ? in_place : out_of_place) = &row;
    std::fputs(report::table_row(out_of_place, in_place).c_str(), stdout);
    std::fflush(stdout);
  }

 private:
  ResultWriter& writer_;
  report::ProgressLine progress_;
  int trials_;
  bool show_progress_ = false;
};

int run_main(int argc, char** argv) {
  Watchdog::block_termination_signals();  // before MPI_Init: MPI's threads inherit the mask
  system::environment_at_startup();       // before the backend sets variables of its own
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const Coordinator coordinator(MPI_COMM_WORLD);
  const int rank = coordinator.rank();
  auto usage_error = [&](const std::string& message) {
    if (rank == 0) std::fprintf(stderr, "ccbench run: %s\n", message.c_str());
    return finish_mpi(exit_code::usage);
  };

  RunConfig config;
  try {
    if (!parse_run_options(argc, argv, config, rank == 0)) return finish_mpi(exit_code::ok);
  } catch (const UsageError& e) {
    return usage_error(e.what());
  }

  std::unique_ptr<Backend> backend;
  Plan plan;
  std::string setup_error;
  try {
    BackendOptions options;
    options.path = config.nccl_path;
    options.graph_launches = config.graph_launches;
    options.local_rank = coordinator.local_rank();
    options.local_size = coordinator.local_size();
    backend = make_backend(config.backend, options);
    plan = make_plan(config, *backend, coordinator.size(), rank);
  } catch (const std::exception& e) {
    setup_error = e.what();
  }
  // Every rank must agree before anything is measured; rank 0 speaks for the failure.
  if (coordinator.max_all(setup_error.empty() ? 0.0 : 1.0) > 0) {
    return usage_error(setup_error.empty() ? "another rank failed to set up (see its message)" : setup_error);
  }

  // Memory: two buffers of the largest case per rank must fit before we start.
  {
    const std::uint64_t need = plan.send_bytes + plan.recv_bytes;
    const std::uint64_t budget = backend->memory_budget_bytes(coordinator.local_size());
    const bool fits = budget == 0 || need <= budget;
    if (coordinator.max_all(fits ? 0.0 : 1.0) > 0) {
      return usage_error(fmt::format(
          "-e/--max-bytes {}: the largest case needs {:.1f} MiB of buffers per rank, but only {:.1f} MiB is "
          "available per rank ({} ranks on this node)",
          format_bytes(config.sizes.max_bytes), static_cast<double>(need) / 1048576.0,
          static_cast<double>(budget) / 1048576.0, coordinator.local_size()));
    }
  }

  const PeerTable peers = PeerTable::exchange(coordinator);
  ResultFile header = describe_run(config, coordinator, *backend, plan, argc, argv);
  std::unique_ptr<ResultWriter> writer;
  std::string output_error;
  if (rank == 0) {
    try {
      writer = std::make_unique<ResultWriter>(header, config.json_path);
    } catch (const std::exception& e) {
      output_error = fmt::format("-J/--json {}: {}", config.json_path, e.what());
    }
  }
  if (coordinator.broadcast(output_error) != "") return usage_error(output_error);

  Backend* backend_ptr = backend.get();
  ResultWriter* writer_ptr = writer.get();
  Watchdog watchdog(config.timeout_s, [&, rank, writer_ptr, backend_ptr](const Watchdog::Event& event) {
    end_run("ccbench run", event, rank, writer_ptr, peers, backend_ptr);
  });

  if (rank == 0) {
    for (const auto& skip : plan.skipped)
      std::fprintf(stderr, "ccbench: skipped %s: %s\n", skip.what.c_str(), skip.reason.c_str());
  }

  int exit = exit_code::ok;
  try {
    backend->allocate(plan.send_bytes, plan.recv_bytes);
    system::HostLoadSnapshot load_at_start;
    if (rank == 0) load_at_start = system::sample_host_load();
    SweepTotals totals;
    if (rank == 0) {
      RunOutput output(*writer, plan, config);
      totals = Engine(config, plan, *backend, coordinator, watchdog, output).run();
    } else {
      SweepObserver quiet;
      Engine(config, plan, *backend, coordinator, watchdog, quiet).run();
    }
    watchdog.arm(Phase::finish);
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    const double peak_rss = coordinator.max_all(static_cast<double>(usage.ru_maxrss) * 1024.0);
    const nlohmann::json final_metadata = backend->final_metadata();  // collective
    watchdog.disarm();
    if (rank == 0) {
      writer->set_peak_rss_bytes(static_cast<std::uint64_t>(peak_rss));
      writer->merge_software(final_metadata);
      {  // Was something else running on this host? (rank 0's host; docs/host-load.md)
        const auto load_at_end = system::sample_host_load();
        const auto ours = system::own_processes(load_at_end, static_cast<int>(::getpid()));
        writer->merge_system(
            {{"host_load", system::host_load_json(load_at_start, load_at_end, ours, system::cores_of(ours))}});
      }
      exit = totals.wrong > 0 ? exit_code::data_check_failed : exit_code::ok;
      std::optional<std::string> error;
      if (totals.wrong > 0) error = fmt::format("data check failed: {} wrong elements", totals.wrong);
      const bool saved = writer->finish("complete", exit, error);
      std::printf(
          "# %zu results, %zu met the CI target (±%.1f%%), %llu wrong elements; peak memory %.1f MiB per rank "
          "(buffers %.1f MiB)\n",
          totals.results, totals.ci_met, config.target_ci * 100.0, static_cast<unsigned long long>(totals.wrong),
          peak_rss / 1048576.0, static_cast<double>(plan.send_bytes + plan.recv_bytes) / 1048576.0);
      if (const auto busy = busy_host_note(writer->system())) std::printf("# %s\n", busy->c_str());
      if (!config.json_path.empty() && saved) std::printf("# result file: %s\n", config.json_path.c_str());
      if (totals.wrong > 0) std::fprintf(stderr, "ccbench run: %s\n", error->c_str());
    }
    exit = coordinator.broadcast(exit);
  } catch (const PeerFailure& e) {
    end_run("ccbench run", {exit_code::peer_failed, 0, std::string("peer failed: ") + e.what()}, rank, writer_ptr,
            peers, backend_ptr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ccbench run: rank %d: %s during %s\n", rank, e.what(), watchdog.describe().c_str());
    if (rank == 0 && writer) writer->finish("failed", exit_code::usage, std::string(e.what()));
    std::fflush(stdout);
    std::_Exit(exit_code::usage);
  }
  std::fflush(stdout);
  return finish_mpi(exit);
}

const bool registered = register_command({"run", "collective sweep (launch with mpirun or srun)", &run_main});

}  // namespace
}  // namespace ccbench::cli
