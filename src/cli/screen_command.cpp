// `ccbench screen`: finds the bad hosts of an allocation (docs/screen.md). Launched from a shell;
// starts the launcher (mpirun or srun) itself, once per test, each test an ordinary `ccbench run`
// under its watchdog writing an ordinary result file. The run (rounds, jobs, deadlines, outputs) is
// src/screen/screen_run.hpp, the search src/screen/search.hpp, one test src/screen/screen_test.hpp;
// this file parses the flags, installs the signal handlers and prints. It never loads MPI.
#include <fmt/format.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cli/command.hpp"
#include "cli/number_flags.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"
#include "core/types.hpp"
#include "launch/command_line.hpp"
#include "launch/hosts.hpp"
#include "screen/screen_config.hpp"
#include "screen/screen_file.hpp"
#include "screen/screen_run.hpp"
#include "sweep/flag_suggestion.hpp"
#include "sweep/run_flags.hpp"
#include "system/instance_profile.hpp"

namespace ccbench::cli {
namespace {

namespace fs = std::filesystem;
using namespace ccbench::screen;

std::atomic<int> g_signal{0};
void on_signal(int sig) { g_signal = sig; }

// "screen: test 3 (ring h0,h1) 2.1 s: latency 12.0 us, busbw 1.234 GB/s" on stderr as each test ends.
void print_test_ended(const ScreenTest& t, const std::vector<std::string>& names) {
  std::string hosts;
  for (int h : t.spec.hosts) hosts += (hosts.empty() ? "" : ",") + names[static_cast<std::size_t>(h)];
  std::string what = std::string(name(t.measurement.outcome));
  if (t.measurement.outcome == Outcome::ok && !t.measurement.latency_us) {
    what = "ran (one rank: no transfer to time)";
  } else if (t.measurement.outcome == Outcome::ok) {
    what = fmt::format("latency {:.1f} us", t.measurement.latency_us.value_or(0));
    if (t.measurement.busbw_gbps) what += fmt::format(", busbw {:.3f} GB/s", *t.measurement.busbw_gbps);
    if (t.measurement.host_busy) what += " (not counted: " + *t.measurement.host_busy + ")";
  } else {
    what += ": " + t.measurement.reason;
  }
  std::fprintf(stderr, "screen: test %d (%s %s) %.1f s: %s\n", t.spec.id, std::string(name(t.spec.stage)).c_str(),
               hosts.c_str(), t.end.elapsed_s, what.c_str());
}

// The flags, checked before anything runs or is created. Returns the exit code when the screen
// ends here (--help, a usage error), nullopt when it goes on.
std::optional<int> parse_screen_flags(int argc, char** argv, ScreenConfig& o) {
  CLI::App app{
      "Find the bad hosts of an allocation: each host alone, then neighbours in a ring over the network, then\n"
      "suspects beside hosts shown healthy. Starts the launcher itself, once per test; each test is an ordinary\n"
      "`ccbench run` under its watchdog. Arguments after -- go to the launcher.\n"
      "Exit: 0 all healthy, 1 some not (slow, failed, unreachable or unjudged; the healthy list is still written),\n"
      "2 usage, 3 the screen could not run.",
      "ccbench screen"};
  std::string hosts_text, hostfile, small = "8", large = "4M", instance_type;
  // `ccbench run`'s flags of the same names (sweep/run_flags): what run takes, the screen takes.
  std::string timeout = fmt::format("{}", o.timeout_s), max_time_per_size = fmt::format("{}", o.max_time_per_size_s);
  std::optional<double> expect_busbw, expect_latency;
  app.add_option("--hosts", hosts_text, "comma-separated host names or Slurm hostlists (ccb-h[0-3,5])");
  app.add_option("--hostfile", hostfile, "Open MPI hostfile (host [slots=N] per line)");
  app.add_option("--ranks-per-host", o.ranks_per_host, "ranks on each host (default 1)")->check(CLI::Range(1, 1024));
  add_backend_flag(app, o.backend, "mpi | nccl (default mpi)");
  add_nccl_path_flag(app, o.path, "nvlink | efa | all (nccl)");
  app.add_option("--launcher", o.launcher_name, "mpirun | srun (default mpirun)")
      ->check(CLI::IsMember({"mpirun", "srun"}));
  app.add_option("--launcher-arg", o.launcher_args, "one argument for the launcher (repeatable; or after --)")
      ->allow_extra_args(false);
  std::vector<std::string> collectives;
  for (Op op : all_collective_ops()) {
    // A screen test sweeps two sizes; a matrix op (alltoallv, moe_*) has no size, only its matrix.
    if (info(op).buffers != OpBuffers::matrix) collectives.emplace_back(name(op));
  }
  app.add_option("--op", o.op, "the collective of every test (default allreduce)")->check(CLI::IsMember(collectives));
  app.add_option("-b,--small-bytes", small, "the latency-bound size (default 8)");
  app.add_option("-e,--large-bytes", large, "the bandwidth-bound size (default 4M)");
  add_iters_flag(app, o.iters, "samples per size, or auto (default 10)");
  add_warmup_flag(app, o.warmup, "warm-up ops per size (default 2)");
  add_timeout_flag(app, timeout, "each test's watchdog, seconds (default 30; 0 = none: the test deadline ends it)");
  add_max_time_per_size_flag(app, max_time_per_size, "seconds of samples per size (default 2)");
  app.add_option("--test-timeout", o.test_timeout_s,
                 "seconds after which the screen ends a test itself (default 2 x -T + 60)")
      ->check(finite_number())
      ->check(CLI::Range(1.0, 1e6));
  app.add_option("--run-arg", o.run_args, "one more argument for every `ccbench run` (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--concurrency", o.concurrency,
                 "tests at once, never sharing a host (default 0: every test of a round)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--expect-busbw", expect_busbw, "absolute floor of a pair's busbw, GB/s")
      ->check(finite_number())
      ->check(CLI::PositiveNumber);
  app.add_option("--expect-latency-us", expect_latency, "absolute ceiling of a pair's small-message time, us")
      ->check(finite_number())
      ->check(CLI::PositiveNumber);
  app.add_option("--instance-type", instance_type,
                 "floor from the instance profile: 80% of its EFA line rate (efa_gbps / 8 GB/s)");
  const Criteria defaults;
  app.add_option("--tolerance", o.criteria.busbw_tolerance,
                 fmt::format("margin: a host is slow beyond this fraction below the fleet's busbw ({})",
                             defaults.busbw_tolerance))
      ->check(finite_number())
      ->check(CLI::Range(0.0, 0.99));
  app.add_option(
         "--latency-tolerance", o.criteria.latency_tolerance,
         fmt::format("margin: slow beyond this fraction above the fleet's latency ({})", defaults.latency_tolerance))
      ->check(finite_number())
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--judge", o.judge, "busbw | latency | both (default both)")
      ->check(CLI::IsMember({"busbw", "latency", "both"}));
  app.add_option(
         "--alpha", o.criteria.alpha,
         fmt::format("family-wise rate of blaming a healthy host, Holm over hosts and metrics ({})", defaults.alpha))
      ->check(finite_number())
      ->check(CLI::Range(1e-9, 0.5));
  app.add_option(
         "--max-tests", o.criteria.max_tests,
         fmt::format("network tests beside healthy hosts a host near the margin gets at most ({})", defaults.max_tests))
      ->check(CLI::Range(defaults.min_tests, 64));
  app.add_option("--out", o.out, "folder for screen.json and every test's result file (must not exist)")->required();
  app.add_option("--healthy-out", o.healthy_out, "write a hostfile of the healthy hosts");
  app.add_option("--exclude-out", o.exclude_out, "write the other hosts as a Slurm --exclude list");
  app.add_option("--unjudged", o.unjudged_name,
                 "hosts neither shown healthy nor blamed (noisy, or tested on a busy host): exclude (default: out of "
                 "--healthy-out, on --exclude-out) | include (in --healthy-out)")
      ->check(CLI::IsMember({"exclude", "include"}));
  app.add_option("--ccbench", o.ccbench, "the ccbench binary the launcher starts (default: this one)");
  std::vector<std::string> rest;
  app.add_option("LAUNCHER_ARGS", rest, "after --: arguments for the launcher");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ccbench screen: %s\n", ccbench::parse_error_text(app, e).c_str());
    return exit_code::usage;
  }
  o.launcher_args.insert(o.launcher_args.end(), rest.begin(), rest.end());
  o.launcher = *launch::parse_launcher(o.launcher_name);
  o.unjudged = *parse_unjudged_hosts(o.unjudged_name);

  try {
    if (!hosts_text.empty() && !hostfile.empty()) throw UsageError("--hosts and --hostfile: give one of them");
    if (!hosts_text.empty()) {
      o.hosts = launch::parse_host_list(hosts_text, "--hosts");
      o.hosts_source = "--hosts";
    } else if (!hostfile.empty()) {
      o.hosts = launch::read_hostfile(hostfile);
      o.hosts_source = "--hostfile " + hostfile;
    } else if (const char* nodes = std::getenv("SLURM_JOB_NODELIST"); nodes && *nodes) {
      o.hosts = launch::expand_slurm_nodelist(nodes, "SLURM_JOB_NODELIST");
      o.hosts_source = "SLURM_JOB_NODELIST";
    } else {
      throw UsageError("no hosts: give --hosts or --hostfile, or run inside a Slurm allocation (SLURM_JOB_NODELIST)");
    }
    o.small_bytes = bytes_flag("-b/--small-bytes", small);
    o.large_bytes = bytes_flag("-e/--large-bytes", large);
    if (o.small_bytes == 0 || o.large_bytes <= o.small_bytes)
      throw UsageError(
          fmt::format("-b/--small-bytes {} and -e/--large-bytes {}: need 0 < small < large", small, large));
    // Run's checks, in run's words: a test's `ccbench run` would refuse the same values.
    const BackendKind backend = backend_flag(o.backend);
    if (!o.path.empty()) {  // in run's order: the registry refuses --path for other backends first
      if (backend != BackendKind::nccl) throw UsageError("--path applies to --backend nccl only");
      nccl_path_flag(o.path);
    }
    parse_iters_flag(o.iters);
    check_warmup_flag(o.warmup);
    o.timeout_s = parse_timeout_flag(timeout);
    o.max_time_per_size_s = parse_max_time_per_size_flag(max_time_per_size);
    if (o.test_timeout_s == 0) o.test_timeout_s = 2 * o.timeout_s + 60;
    o.criteria.judge_busbw = o.judge != "latency";
    o.criteria.judge_latency = o.judge != "busbw";
    o.criteria.expect_busbw_gbps = expect_busbw;
    o.criteria.expect_latency_us = expect_latency;
    if (!instance_type.empty() && !expect_busbw) {
      const auto profile = system::find_instance_profile(instance_type);
      if (!profile)
        throw UsageError(fmt::format("--instance-type {}: no such profile (configs/instances)", instance_type));
      o.criteria.expect_busbw_gbps = 0.8 * profile->efa_gbps / 8.0;
    }
    check_screen_config(o, small, large);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ccbench screen: %s\n", e.what());
    return exit_code::usage;
  }
  return std::nullopt;
}

int screen_main(int argc, char** argv) {
  ScreenConfig o;
  if (const auto exit = parse_screen_flags(argc, argv, o)) return *exit;
  if (o.ccbench.empty()) {
    std::error_code ec;
    o.ccbench = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec || o.ccbench.empty()) o.ccbench = argv[0];
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);

  ScreenPrinter printer;
  printer.started = [&] {
    std::fprintf(stderr,
                 "screen: %zu hosts from %s, %d rank(s) each, %s %s %s..%s, -T %g s, test deadline %g s, concurrency "
                 "%s\n",
                 o.hosts.size(), o.hosts_source.c_str(), o.ranks_per_host, o.launcher_name.c_str(), o.op.c_str(),
                 format_bytes(o.small_bytes).c_str(), format_bytes(o.large_bytes).c_str(), o.timeout_s,
                 o.test_timeout_s, o.concurrency == 0 ? "unlimited" : std::to_string(o.concurrency).c_str());
  };
  printer.test_ended = [&](const ScreenTest& t) { print_test_ended(t, o.hosts); };
  printer.finished = [&](const Search& search, double elapsed_s) {
    std::fputs(screen_table_text(search, o, elapsed_s).c_str(), stdout);
  };
  printer.screen_file = [](const fs::path& p) { std::printf("# screen file: %s\n", p.string().c_str()); };
  printer.error = [](const std::string& line) { std::fprintf(stderr, "ccbench screen: %s\n", line.c_str()); };
  ScreenProvenance provenance;
  provenance.command.assign(argv, argv + argc);
  provenance.tool_version = CCBENCH_VERSION;
  return run_screen(o, provenance, g_signal, printer);
}

const bool registered =
    register_command({"screen", "find the bad hosts of an allocation (launched from a shell)", &screen_main});

}  // namespace
}  // namespace ccbench::cli
