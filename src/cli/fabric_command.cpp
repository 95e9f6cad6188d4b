// `ccbench fabric`: libfabric point-to-point latency and bandwidth between two ranks. The control
// channel only bootstraps (endpoint names, RMA keys) and aggregates; every measured byte goes
// through libfabric. The measuring is `ccbench run`'s run session (sweep/session.hpp) with the
// libfabric backend from the registry and the fabric section in the header.
#include "cli/measuring_commands.hpp"
#include "measure/frame.hpp"

#ifdef CCBENCH_HAVE_LIBFABRIC

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "cli/fabric_options.hpp"
#include "core/deadlines.hpp"
#include "core/error.hpp"
#include "core/run_metadata.hpp"
#include "fabric/fabric_backend.hpp"
#include "fabric/fabric_options.hpp"
#include "fabric/providers.hpp"
#include "sweep/console_reporter.hpp"
#include "sweep/describe_run.hpp"
#include "sweep/session.hpp"

namespace ccbench::cli {
namespace {

using fabric::FabricBackend;
using fabric::FabricConfig;

// The header hook: the fabric section and the config say what this run did.
void describe_fabric_run(ResultFile& header, const FabricConfig& config, const FabricBackend& backend) {
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

// One line on stderr before the first test: `-p tcp` with five ops measures about a minute, and
// the per-size progress line shows only where stderr is a terminal, which under mpirun it is not.
// With -n auto each test samples for at most --max-time-per-size; warm-ups and calibration come on
// top (100 tests of -p tcp took 58 s on an idle 2-core machine, 202 s beside two builds).
std::string duration_line(const Plan& plan, const RunConfig& run) {
  const std::size_t tests = plan.cases_per_trial * static_cast<std::size_t>(run.trials);
  std::string line = fmt::format("ccbench fabric: {} test{}", tests, tests == 1 ? "" : "s");
  if (!run.iters) {
    const double bound_s = static_cast<double>(tests) * run.max_time_per_size_s;
    line += fmt::format(
        "; sampling alone takes up to {:.{}f} s (--max-time-per-size {:g} s a test), warm-ups and "
        "calibration on top",
        bound_s, bound_s < 10 ? 1 : 0, run.max_time_per_size_s);
  }
  return line + (show_progress(run) ? "\n" : "; --progress always prints a line per test with the time left\n");
}

}  // namespace

std::optional<int> fabric_before_mpi(int argc, char** argv) {
  if (!fabric::wants_provider_list(argc, argv)) return std::nullopt;
  std::fputs(fabric::format_provider_list(fabric::query_providers()).c_str(), stdout);
  return exit_code::ok;
}

int fabric_entry(measure::Frame& frame) {
  ControlChannel& channel = frame.channel();
  FabricConfig config;
  try {
    if (!parse_fabric_options(frame.argc(), frame.argv(), config, channel.is_root())) return exit_code::ok;
  } catch (const UsageError& e) {
    return frame.usage_error(e.what());
  }

  SessionHooks hooks;
  hooks.wrong_unit = "bytes";
  hooks.watch_allocate = true;  // allocate() swaps RMA keys with the peer
  hooks.make_backend = [&config](ControlChannel& ch) {
    BackendOptions options;
    options.channel = &ch;
    options.local_rank = ch.local_rank();
    options.local_size = ch.local_size();
    options.provider = config.provider;
    options.domain = config.domain;
    options.window = config.window;
    options.memory = std::string(fabric::name(config.memory));
    options.want_rma =
        std::ranges::any_of(config.run.ops, [](Op op) { return op == Op::fabric_write || op == Op::fabric_read; });
    options.setup_watchdog_s = setup_watchdog_s(config.run.timeout_s, kSetupTimeoutFloorS);
    options.probe_timeout_s = inside_setup_watchdog_s(
        config.run.timeout_s > 0 ? std::min(config.run.timeout_s, 30.0) : 30.0, options.setup_watchdog_s);
    return make_backend("libfabric", options);
  };
  hooks.describe = [&config, &frame](ControlChannel& ch, const Backend& backend, const Plan& plan) {
    return describe_run(config.run, ch, backend, plan, recorded_command("ccbench fabric", frame.argc(), frame.argv()));
  };
  hooks.adjust_header = [&config](ResultFile& header, const Backend& backend) {
    describe_fabric_run(header, config, static_cast<const FabricBackend&>(backend));
  };
  hooks.observer = [&config](const Plan& plan, const Backend& backend) -> std::unique_ptr<SweepObserver> {
    std::fputs(duration_line(plan, config.run).c_str(), stderr);
    return std::make_unique<ConsoleReporter>(plan, config.run,
                                             " over " + static_cast<const FabricBackend&>(backend).provider(), stdout,
                                             stderr, /*point_to_point=*/true);
  };
  hooks.notes = [](const Backend& backend) { return static_cast<const FabricBackend&>(backend).notes(); };
  return RunSession(channel, config.run, std::move(hooks), frame.ending()).run();
}

}  // namespace ccbench::cli

#else  // no libfabric

#include <cstdio>

#include "core/error.hpp"

namespace ccbench::cli {

std::optional<int> fabric_before_mpi(int, char**) {
  std::fprintf(stderr,
               "ccbench fabric: this ccbench was built without libfabric (install libfabric-dev and configure with "
               "-DCCBENCH_WITH_LIBFABRIC=ON)\n");
  return exit_code::usage;
}

int fabric_entry(measure::Frame&) { return exit_code::usage; }  // fabric_before_mpi has ended it

}  // namespace ccbench::cli

#endif
