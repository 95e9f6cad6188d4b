// `ccbench fabric`: libfabric point-to-point latency and bandwidth between two ranks. MPI only
// bootstraps (endpoint names, RMA keys) and aggregates; every measured byte goes through libfabric.
// The measuring reuses `ccbench run`'s machinery: the sweep engine (warm-up, batching, `-n auto`,
// trials, check, aggregation), the watchdog, the result writer and the run metadata.
#include "cli/command.hpp"

#ifdef CCBENCH_HAVE_LIBFABRIC

#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "cli/run_ending.hpp"
#include "cli/run_metadata.hpp"
#include "core/run_metadata.hpp"
#include "core/error.hpp"
#include "fabric/fabric_backend.hpp"
#include "fabric/fabric_options.hpp"
#include "fabric/providers.hpp"
#include "report/progress_line.hpp"
#include "sweep/coordinator.hpp"
#include "sweep/engine.hpp"
#include "sweep/plan.hpp"
#include "sweep/result_writer.hpp"
#include "sweep/watchdog.hpp"

namespace ccbench::cli {
namespace {

using fabric::FabricBackend;
using fabric::FabricConfig;

constexpr int kExchangeTag = 7301;

// Swaps a blob with the other rank over MPI (the control channel; never timed).
std::string swap_with_peer(const std::string& mine, int peer) {
  int my_len = static_cast<int>(mine.size());
  int their_len = 0;
  if (MPI_Sendrecv(&my_len, 1, MPI_INT, peer, kExchangeTag, &their_len, 1, MPI_INT, peer, kExchangeTag, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE) != MPI_SUCCESS) {
    throw PeerFailure("MPI_Sendrecv (address exchange) failed");
  }
  std::string theirs(static_cast<std::size_t>(their_len), '\0');
  if (MPI_Sendrecv(mine.data(), my_len, MPI_CHAR, peer, kExchangeTag + 1, theirs.data(), their_len, MPI_CHAR, peer,
                   kExchangeTag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
    throw PeerFailure("MPI_Sendrecv (address exchange) failed");
  }
  return theirs;
}

// Rank 0's output: the result file (through ResultWriter), a table on stdout, a progress line.
class FabricOutput final : public SweepObserver {
 public:
  FabricOutput(ResultWriter& writer, const Plan& plan, const RunConfig& config, std::string provider)
      : writer_(writer),
        progress_(plan.cases_per_trial * static_cast<std::size_t>(config.trials), config.trials),
        trials_(config.trials),
        provider_(std::move(provider)) {
    show_progress_ = config.progress == "always" || (config.progress == "auto" && ::isatty(STDERR_FILENO));
  }
  void on_op_begin(int trial, Op op) override {
    std::printf("#\n# %s over %s%s\n", std::string(name(op)).c_str(), provider_.c_str(),
                trials_ > 1 ? fmt::format(", trial {}/{}", trial + 1, trials_).c_str() : "");
    std::printf("# %10s %6s %7s %12s %12s %12s %10s %10s %6s %6s\n", "bytes", "batch", "samples", "median_us", "min_us",
                "p99_us", "algbw_GB/s", "busbw_GB/s", "ci_met", "wrong");
    std::fflush(stdout);
  }
  void on_result(const ResultRow& row) override {
    writer_.append(row);
    std::printf("  %10llu %6d %7zu %12.3f %12.3f %12.3f %10.4f %10.4f %6s %6llu\n",
                static_cast<unsigned long long>(row.bytes), row.batch, row.samples_us.size(), row.time_us.median,
                row.time_us.min, row.time_us.p99, row.algbw_gbps, row.busbw_gbps, row.ci_target_met ? "yes" : "no",
                static_cast<unsigned long long>(row.wrong));
    std::fflush(stdout);
    if (show_progress_) {
      std::fputs(progress_.on_result(row).c_str(), stderr);
      std::fflush(stderr);
    }
  }

 private:
  ResultWriter& writer_;
  report::ProgressLine progress_;
  int trials_;
  std::string provider_;
  bool show_progress_ = false;
};

// The result file's header: `ccbench run`'s description, with the fabric section, the command and
// the config made to say what this run did.
void describe_fabric_run(ResultFile& header, const FabricConfig& config, const FabricBackend& backend) {
  if (!header.run.command.empty()) header.run.command[0] = "ccbench fabric";
  const nlohmann::json fabric = backend.describe();
  const RunMetadata run(header);
  FabricRecord record;
  record.path = fabric.contains("path") ? metadata_text(fabric["path"]) : std::string();
  if (fabric.contains("provider") && !fabric["provider"].is_null()) record.provider = metadata_text(fabric["provider"]);
  // The instance profile's EFA generation and link rate describe the EFA path only.
  if (record.path == "efa") {
    record.generation = run.efa_generation();
    record.link_gbps = run.link_gbps();
  }
  header.fabric = fabric;  // keeps the backend's domain and other details
  record_fabric(header, record);
  nlohmann::json& c = header.config;
  c["backend"] = "libfabric";
  c["fabric"] = {
      {"provider_requested", config.provider.empty() ? nlohmann::json(nullptr) : nlohmann::json(config.provider)},
      {"provider", backend.provider()},
      {"domain", fabric.value("domain", "")},
      {"endpoint", "rdm"},
      {"messages", backend.tagged() ? "tagged" : "msg"},
      {"window", config.window},
      {"memory", fabric::name(config.memory)},
      {"inject", "messages of at most inject_size bytes are injected (no completion), as fi_pingpong"},
      {"completion", "busy polling of fi_cq_read; transmit completions use the provider's default"},
      {"roles", "rank 0 initiates (pingpong, bw, write, read), rank 1 answers"}};
  c["timing"]["sample"] =
      "pingpong: half a round trip (batch time / 2 / batch, as fi_pingpong's usec/xfer); bw, bibw, write, read: "
      "time per message (batch time / window / batch) with `window` operations outstanding; then the maximum over "
      "ranks";
  c["timing"]["busbw"] = "fabric_bibw: both directions (2 x algbw); other tests: algbw";
  c["dtype"] = "uint8";
  c["in_place"] = "no";
}

int fabric_main(int argc, char** argv) {
  if (fabric::wants_provider_list(argc, argv)) {
    std::fputs(fabric::format_provider_list(fabric::query_providers()).c_str(), stdout);
    return exit_code::ok;
  }

  Watchdog::block_termination_signals();  // before MPI_Init: MPI's threads inherit the mask
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const Coordinator coordinator(MPI_COMM_WORLD);
  const int rank = coordinator.rank();
  auto usage_error = [&](const std::string& message) {
    if (rank == 0) std::fprintf(stderr, "ccbench fabric: %s\n", message.c_str());
    return finish_mpi(exit_code::usage);
  };
  // Every rank reports its setup error (or ""); all ranks learn whether any failed.
  auto agree = [&](const std::string& error) -> std::optional<std::string> {
    const auto all = coordinator.gather_to_root(error);
    std::string combined;
    for (std::size_t r = 0; r < all.size(); ++r) {
      if (all[r].empty()) continue;
      if (r > 0 && all[r] == all[0]) continue;  // the same message from both ranks once
      combined += (combined.empty() ? "" : "; ") + (r > 0 ? fmt::format("rank {}: ", r) : std::string()) + all[r];
    }
    if (coordinator.max_all(error.empty() ? 0.0 : 1.0) == 0) return std::nullopt;
    return coordinator.broadcast(combined);
  };

  FabricConfig config;
  try {
    if (!fabric::parse_fabric_options(argc, argv, config, rank == 0)) return finish_mpi(exit_code::ok);
  } catch (const UsageError& e) {
    return usage_error(e.what());
  }
  if (coordinator.size() != 2) {
    return usage_error(
        fmt::format("fabric tests run between exactly 2 ranks (mpirun -np 2 ...); got {}", coordinator.size()));
  }
  const int peer = 1 - rank;

  // The provider: rank 0 resolves the default so both ranks ask for the same one.
  std::string provider = config.provider;
  if (provider.empty()) {
    std::string choice;
    if (rank == 0) {
      choice = fabric::choose_default_provider(fabric::rdm_provider_names(fabric::query_providers()),
                                               coordinator.local_size() == coordinator.size());
    }
    provider = coordinator.broadcast(choice);
    if (provider.empty()) {
      return usage_error(
          "no libfabric provider offers reliable datagram endpoints (FI_EP_RDM) here; see "
          "`ccbench fabric --list-providers`");
    }
  }

  // Set-up in steps, all ranks agreeing after each, so no rank waits on a peer that gave up.
  std::unique_ptr<FabricBackend> backend;
  std::string error;
  try {
    fabric::EndpointOptions options;
    options.provider = provider;
    options.domain = config.domain;
    options.want_rma =
        std::ranges::any_of(config.run.ops, [](Op op) { return op == Op::fabric_write || op == Op::fabric_read; });
    options.memory = config.memory;
    options.window = config.window;
    options.rank = rank;
    options.cuda_device = coordinator.local_rank();
    backend = std::make_unique<FabricBackend>(options);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (auto failed = agree(error)) return usage_error(*failed);

  try {
    backend->connect(swap_with_peer(backend->local_address(), peer));
  } catch (const std::exception& e) {
    error = fmt::format("provider {} cannot reach the peer: {}", backend->provider(), e.what());
  }
  if (auto failed = agree(error)) return usage_error(*failed);

  // A provider that cannot reach the peer fails here, before measuring (exit 2), not as a hang.
  const double probe_s = config.run.timeout_s > 0 ? std::min(config.run.timeout_s, 30.0) : 30.0;
  if (const std::string why = backend->probe(probe_s); !why.empty()) {
    error = fmt::format("provider {} cannot reach the peer: {}", backend->provider(), why);
  }
  if (auto failed = agree(error)) return usage_error(*failed);
  backend->set_exchange([peer](const std::string& mine) { return swap_with_peer(mine, peer); });

  Plan plan;
  try {
    plan = make_plan(config.run, *backend, coordinator.size(), rank);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (auto failed = agree(error)) return usage_error(*failed);

  {
    const std::uint64_t need = plan.send_bytes + plan.recv_bytes;
    const std::uint64_t budget = backend->memory_budget_bytes(coordinator.local_size());
    const bool fits = budget == 0 || need <= budget;
    if (coordinator.max_all(fits ? 0.0 : 1.0) > 0) {
      return usage_error(fmt::format("-e/--max-bytes {}: needs {:.1f} MiB of buffers per rank, {:.1f} MiB available",
                                     format_bytes(config.run.sizes.max_bytes), static_cast<double>(need) / 1048576.0,
                                     static_cast<double>(budget) / 1048576.0));
    }
  }

  const PeerTable peers = PeerTable::exchange(coordinator);
  ResultFile header = describe_run(config.run, coordinator, *backend, plan, argc, argv);
  std::unique_ptr<ResultWriter> writer;
  std::string output_error;
  if (rank == 0) {
    describe_fabric_run(header, config, *backend);
    try {
      writer = std::make_unique<ResultWriter>(header, config.run.json_path);
    } catch (const std::exception& e) {
      output_error = fmt::format("-J/--json {}: {}", config.run.json_path, e.what());
    }
  }
  if (coordinator.broadcast(output_error) != "") return usage_error(output_error);

  ResultWriter* writer_ptr = writer.get();
  Watchdog watchdog(config.run.timeout_s, [&, rank, writer_ptr](const Watchdog::Event& event) {
    end_run("ccbench fabric", event, rank, writer_ptr, peers, nullptr);
  });

  if (rank == 0) {
    for (const auto& note : backend->notes()) std::fprintf(stderr, "ccbench fabric: note: %s\n", note.c_str());
    for (const auto& skip : plan.skipped) {
      std::fprintf(stderr, "ccbench fabric: skipped %s: %s\n", skip.what.c_str(), skip.reason.c_str());
    }
  }

  int exit = exit_code::ok;
  try {
    watchdog.arm(Phase::setup);
    backend->allocate(plan.send_bytes, plan.recv_bytes);
    SweepTotals totals;
    if (rank == 0) {
      FabricOutput output(*writer, plan, config.run, backend->provider());
      totals = Engine(config.run, plan, *backend, coordinator, watchdog, output).run();
    } else {
      SweepObserver quiet;
      Engine(config.run, plan, *backend, coordinator, watchdog, quiet).run();
    }
    watchdog.arm(Phase::finish);
    coordinator.barrier();
    watchdog.disarm();
    if (rank == 0) {
      exit = totals.wrong > 0 ? exit_code::data_check_failed : exit_code::ok;
      std::optional<std::string> failure;
      if (totals.wrong > 0) failure = fmt::format("data check failed: {} wrong bytes", totals.wrong);
      const bool saved = writer->finish("complete", exit, failure);
      std::printf("# %zu results, %zu met the CI target (±%.1f%%), %llu wrong bytes\n", totals.results, totals.ci_met,
                  config.run.target_ci * 100.0, static_cast<unsigned long long>(totals.wrong));
      if (!config.run.json_path.empty() && saved) std::printf("# result file: %s\n", config.run.json_path.c_str());
      if (totals.wrong > 0) std::fprintf(stderr, "ccbench fabric: %s\n", failure->c_str());
    }
    exit = coordinator.broadcast(exit);
  } catch (const PeerFailure& e) {
    end_run("ccbench fabric", {exit_code::peer_failed, 0, std::string("peer failed: ") + e.what()}, rank, writer_ptr,
            peers, nullptr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ccbench fabric: rank %d: %s during %s\n", rank, e.what(), watchdog.describe().c_str());
    if (rank == 0 && writer) writer->finish("failed", exit_code::usage, std::string(e.what()));
    std::fflush(stdout);
    std::_Exit(exit_code::usage);
  }
  std::fflush(stdout);
  backend.reset();  // close the endpoint while the peer is still there
  return finish_mpi(exit);
}

}  // namespace
}  // namespace ccbench::cli

#else  // no libfabric

#include <cstdio>

namespace ccbench::cli {
namespace {

int fabric_main(int, char**) {
  std::fprintf(stderr,
               "ccbench fabric: this ccbench was built without libfabric (install libfabric-dev and configure with "
               "-DCCBENCH_WITH_LIBFABRIC=ON)\n");
  return 2;
}

}  // namespace
}  // namespace ccbench::cli

#endif

namespace ccbench::cli {
namespace {

const bool registered = register_command(
    {"fabric", "libfabric latency and bandwidth between 2 ranks (launch with mpirun -np 2)", &fabric_main});

}  // namespace
}  // namespace ccbench::cli
