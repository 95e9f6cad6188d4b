// `ccbench screen`: finds the bad hosts of an allocation (docs/screen.md). Launched from a shell;
// starts the launcher (mpirun or srun) itself, once per test, each test an ordinary `ccbench run`
// under its watchdog writing an ordinary result file. The search (which tests, who is blamed) is
// src/screen/search.hpp; one test's command and judgement src/screen/screen_test.hpp, starting and
// ending the jobs src/launch/;
// this file parses the flags and prints and writes the outputs. It never loads MPI.
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/command.hpp"
#include "cli/number_flags.hpp"
#include "core/bandwidth.hpp"
#include "core/error.hpp"
#include "core/output_folders.hpp"
#include "core/result.hpp"
#include "core/sizes.hpp"
#include "core/types.hpp"
#include "launch/allocation.hpp"
#include "launch/command_line.hpp"
#include "launch/hosts.hpp"
#include "launch/outcome.hpp"
#include "screen/outputs.hpp"
#include "screen/screen_test.hpp"
#include "screen/search.hpp"
#include "sweep/flag_suggestion.hpp"
#include "sweep/run_flags.hpp"
#include "system/instance_profile.hpp"

namespace ccbench::cli {
namespace {

namespace fs = std::filesystem;
using namespace ccbench::screen;

constexpr int kScreenVersion = 3;
constexpr int kExitSomeBad = 1;
constexpr int kExitCouldNotRun = 3;

struct ScreenOptions : ScreenTestConfig {
  std::vector<std::string> hosts;
  std::string hosts_source;  // --hosts, --hostfile FILE or SLURM_JOB_NODELIST
  std::string launcher_name = "mpirun";
  std::string judge = "both";  // busbw | latency | both
  int concurrency = 0;
  Criteria criteria;
  fs::path out;
  fs::path healthy_out;
  fs::path exclude_out;
  std::string unjudged_name = "exclude";  // --unjudged
  UnjudgedHosts unjudged = UnjudgedHosts::exclude;
};

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// srun may start more tasks on a node than it has CPUs when told to.
bool overcommits(const std::vector<std::string>& launcher_args) {
  for (const auto& a : launcher_args)
    if (a == "-O" || a == "--overcommit" || a == "--oversubscribe") return true;
  return false;
}

std::atomic<int> g_signal{0};
void on_signal(int sig) { g_signal = sig; }

// Runs one round's tests, at most `concurrency` at once (0: all), each bounded by the deadline,
// and prints a line as each ends. Returns false when interrupted by a signal.
bool run_round(std::vector<ScreenTest>& round, const ScreenOptions& o, const std::vector<std::string>& names) {
  std::vector<launch::Job> jobs;
  for (const auto& t : round) jobs.push_back(t.job);
  launch::RunLimits limits;
  limits.concurrency = static_cast<std::size_t>(o.concurrency);
  limits.deadline_s = o.test_timeout_s;
  limits.who = "ccbench screen";
  return launch::run_jobs(jobs, limits, g_signal, [&](std::size_t index, const launch::JobEnd& end) {
    ScreenTest& t = round[index];
    t.end = end;
    judge_screen_test(t, o);
    if (!end.started) return;
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
  });
}

nlohmann::json json_or_null(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::string relative_to(const fs::path& p, const fs::path& dir) { return fs::relative(p, dir).generic_string(); }

// When the screen ran.
struct Timing {
  std::string started_at;
  double elapsed_s = 0;
};

// The flags, checked before anything runs or is created. Returns the exit code when the screen
// ends here (--help, a usage error), nullopt when it goes on.
std::optional<int> parse_screen_flags(int argc, char** argv, ScreenOptions& o) {
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
  for (Op op : all_collective_ops()) collectives.emplace_back(name(op));
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
    // Sizes a test can carry whole: ccbench run rounds a size down to whole elements (per rank for
    // the ops whose size is a total over ranks), and the screen looks its rows up by size.
    if (const auto op = parse_op(o.op)) {
      for (const auto& [flag, text, size] : {std::tuple{"-b/--small-bytes", small, o.small_bytes},
                                             std::tuple{"-e/--large-bytes", large, o.large_bytes}}) {
        const std::array<int, 2> rank_counts{o.ranks_per_host, 2 * o.ranks_per_host};  // one host, a pair
        for (int ranks : rank_counts) {
          const OpLayout layout = layout_for(*op, DType::float32, size, ranks);
          if (layout.count != 0 && layout.bytes == size) continue;
          // A size both a one-host test and a pair test carry whole.
          const std::uint64_t granule = std::lcm(whole_size_granule_bytes(*op, DType::float32, rank_counts[0]),
                                                 whole_size_granule_bytes(*op, DType::float32, rank_counts[1]));
          throw UsageError(
              fmt::format("{} {}: {} of float over {} ranks carries {} bytes, not {}: give a multiple of {} bytes",
                          flag, text, o.op, ranks, layout.bytes, size, granule));
        }
      }
    }
    if (!o.healthy_out.empty() && !o.exclude_out.empty() &&
        fs::weakly_canonical(fs::absolute(o.healthy_out)) == fs::weakly_canonical(fs::absolute(o.exclude_out)))
      throw UsageError(
          fmt::format("--healthy-out and --exclude-out: both are {}; give two files", o.healthy_out.string()));
    for (const auto& [flag, path] :
         {std::pair{"--healthy-out", o.healthy_out}, std::pair{"--exclude-out", o.exclude_out}}) {
      if (!path.empty()) prepare_output_file(path.string(), flag);  // before any test
    }
    if (fs::exists(o.out)) throw UsageError(fmt::format("--out {}: exists; choose a new folder", o.out.string()));
    if (!launch::on_path(o.launcher_name))
      throw UsageError(fmt::format("--launcher {}: '{}' is not on PATH", o.launcher_name, o.launcher_name));
    if (o.launcher == launch::Launcher::srun && !overcommits(o.launcher_args))
      if (const auto allocation = launch::allocation_from_environment())
        launch::check_ranks_fit(*allocation, o.hosts, o.ranks_per_host);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ccbench screen: %s\n", e.what());
    return exit_code::usage;
  }
  return std::nullopt;
}

// The table on stdout: the floors, then one line per host.
void print_table(const Search& search, const ScreenOptions& o, double elapsed_s) {
  const int n = static_cast<int>(o.hosts.size());
  auto evidence_of = [&](const HostResult& r, Stage stage, Metric metric) -> const Evidence* {
    for (const Evidence& e : r.evidence)
      if (e.stage == stage && e.metric == metric) return &e;
    return nullptr;
  };

  std::printf("# ccbench screen: %d hosts, %zu tests in %d rounds, %.1f s\n", n, search.tests().size(), search.rounds(),
              elapsed_s);
  const auto margin_pct = [&](Metric metric) {
    return 100.0 * (metric == Metric::busbw_gbps ? o.criteria.busbw_tolerance : o.criteria.latency_tolerance);
  };
  for (const Floor& f : search.floors()) {
    const bool bw = f.metric == Metric::busbw_gbps;
    const char* where = f.stage == Stage::solo ? "alone:" : "network:";
    const char* what = bw ? "busbw floor" : "latency ceiling";
    const char* unit = bw ? "GB/s" : "us";
    std::string line = fmt::format("# {} {} {}", where, what, f.value ? fmt::format("{:.4g} {}", *f.value, unit) : "-");
    if (f.fleet_median)
      line += fmt::format(" ({:.0f}% {} the fleet's {:.4g}: {} hosts, {} reference tests, noise {:.1f}% per test)",
                          margin_pct(f.metric), bw ? "below" : "above", *f.fleet_median, f.hosts, f.reference_tests,
                          100.0 * f.noise.value_or(0));
    if (f.absolute) line += fmt::format(", absolute {:.4g}", *f.absolute);
    if (!f.judged && f.fleet_median)
      line += fmt::format("; not judged: noise too large to tell a host {:.0f}% off from a healthy one in {} tests",
                          margin_pct(f.metric), o.criteria.max_tests);
    std::printf("%s\n", line.c_str());
  }
  std::printf("%-16s %-12s %-24s %-24s %-12s %s\n", "host", "verdict", "busbw GB/s (floor)", "latency us (ceiling)",
              "tests", "reason");
  for (int h = 0; h < n; ++h) {
    const HostResult& r = search.hosts()[static_cast<std::size_t>(h)];
    auto cell = [&](Metric metric) {
      const Evidence* e = evidence_of(r, Stage::ring, metric);
      if (!e) e = evidence_of(r, Stage::solo, metric);
      if (!e) return std::string("-");
      const std::string mark = e->beyond ? (metric == Metric::busbw_gbps ? " <" : " >") : (e->judged ? "" : " ?");
      return fmt::format("{:.4g}{} ({})", e->measured, mark, e->floor ? fmt::format("{:.4g}", *e->floor) : "-");
    };
    std::string reason = r.reason;
    for (const Evidence& e : r.evidence) {
      if (e.judged) continue;
      if (!reason.empty()) reason += "; ";
      reason += not_judged_text(e, margin_pct(e.metric));
    }
    std::vector<std::string> ids;
    for (int id : r.implicating_tests) ids.push_back(std::to_string(id));
    std::printf("%-16s %-12s %-24s %-24s %-12s %s\n", o.hosts[static_cast<std::size_t>(h)].c_str(),
                std::string(name(r.verdict)).c_str(), cell(Metric::busbw_gbps).c_str(),
                cell(Metric::latency_us).c_str(), ids.empty() ? "-" : join(ids, ",").c_str(), reason.c_str());
  }
}

// screen.json: the configuration, the floors, every host's verdict and evidence, every test.
nlohmann::json screen_json(const Search& search, const ScreenOptions& o, const std::vector<ScreenTest>& done,
                           const Timing& timing, int exit, int argc, char** argv) {
  const int n = static_cast<int>(o.hosts.size());
  std::map<Verdict, int> counts;
  for (const HostResult& r : search.hosts()) ++counts[r.verdict];
  const fs::path out_abs = fs::absolute(o.out);
  nlohmann::json j;
  j["screen_version"] = kScreenVersion;
  j["tool"] = {{"name", "ccbench"}, {"version", CCBENCH_VERSION}};
  j["started_at"] = timing.started_at;
  j["finished_at"] = utc_timestamp_now();
  j["elapsed_s"] = timing.elapsed_s;
  j["command"] = std::vector<std::string>(argv, argv + argc);
  j["config"] = {{"hosts_source", o.hosts_source},
                 {"ranks_per_host", o.ranks_per_host},
                 {"backend", o.backend},
                 {"path", o.path.empty() ? nlohmann::json() : nlohmann::json(o.path)},
                 {"launcher", o.launcher_name},
                 {"launcher_args", o.launcher_args},
                 {"op", o.op},
                 {"small_bytes", o.small_bytes},
                 {"large_bytes", o.large_bytes},
                 {"timeout_s", o.timeout_s},
                 {"test_timeout_s", o.test_timeout_s},
                 {"concurrency", o.concurrency},
                 {"busbw_tolerance", o.criteria.busbw_tolerance},
                 {"latency_tolerance", o.criteria.latency_tolerance},
                 {"alpha", o.criteria.alpha},
                 {"min_tests", o.criteria.min_tests},
                 {"max_tests", o.criteria.max_tests},
                 {"judge", o.judge},
                 {"expect_busbw_gbps", json_or_null(o.criteria.expect_busbw_gbps)},
                 {"expect_latency_us", json_or_null(o.criteria.expect_latency_us)},
                 {"unjudged", o.unjudged_name}};
  j["summary"] = {{"hosts", n},
                  {"tests", search.tests().size()},
                  {"rounds", search.rounds()},
                  {"healthy", counts[Verdict::healthy]},
                  {"slow", counts[Verdict::slow]},
                  {"failed", counts[Verdict::failed]},
                  {"unreachable", counts[Verdict::unreachable]},
                  {"unjudged", counts[Verdict::unjudged]},
                  {"exit_code", exit}};
  j["floors"] = nlohmann::json::array();
  for (const Floor& f : search.floors()) {
    j["floors"].push_back({{"stage", f.stage == Stage::solo ? "solo" : "network"},
                           {"metric", name(f.metric)},
                           {"hosts", f.hosts},
                           {"reference_tests", f.reference_tests},
                           {"fleet_median", json_or_null(f.fleet_median)},
                           {"noise", json_or_null(f.noise)},
                           {"noise_df", json_or_null(f.noise_df)},
                           {"relative", json_or_null(f.relative)},
                           {"absolute", json_or_null(f.absolute)},
                           {"value", json_or_null(f.value)},
                           {"judged", f.judged}});
  }
  j["hosts"] = nlohmann::json::array();
  for (int h = 0; h < n; ++h) {
    const HostResult& r = search.hosts()[static_cast<std::size_t>(h)];
    nlohmann::json ev = nlohmann::json::array();
    nlohmann::json not_judged = nlohmann::json::array();
    std::string reason = r.reason;
    for (const Evidence& e : r.evidence) {
      const nlohmann::json busy = e.host_busy.empty() ? nlohmann::json() : nlohmann::json(e.host_busy);
      ev.push_back({{"stage", e.stage == Stage::solo ? "solo" : "network"},
                    {"metric", name(e.metric)},
                    {"measured", e.measured},
                    {"floor", json_or_null(e.floor)},
                    {"host_busy_tests", e.host_busy_tests},
                    {"host_busy", busy},
                    {"tests", e.tests},
                    {"ratio", json_or_null(e.ratio)},
                    {"noise", json_or_null(e.noise)},
                    {"p_value", json_or_null(e.p_value)},
                    {"beyond", e.beyond},
                    {"judged", e.judged}});
      if (e.judged) continue;
      not_judged.push_back({{"stage", e.stage == Stage::solo ? "solo" : "network"},
                            {"metric", name(e.metric)},
                            {"tests", e.tests},
                            {"noise", json_or_null(e.noise)},
                            {"host_busy_tests", e.host_busy_tests},
                            {"host_busy", busy}});
      if (r.verdict != Verdict::unjudged) continue;
      const double margin = e.metric == Metric::busbw_gbps ? o.criteria.busbw_tolerance : o.criteria.latency_tolerance;
      reason += (reason.empty() ? "" : "; ") + not_judged_text(e, 100.0 * margin);
    }
    j["hosts"].push_back({{"name", o.hosts[static_cast<std::size_t>(h)]},
                          {"verdict", name(r.verdict)},
                          {"reason", reason.empty() ? nlohmann::json() : nlohmann::json(reason)},
                          {"evidence", ev},
                          {"not_judged", not_judged},
                          {"implicating_tests", r.implicating_tests}});
  }
  j["tests"] = nlohmann::json::array();
  for (const ScreenTest& t : done) {
    std::vector<std::string> names;
    for (int h : t.spec.hosts) names.push_back(o.hosts[static_cast<std::size_t>(h)]);
    j["tests"].push_back(
        {{"id", t.spec.id},
         {"round", t.spec.round},
         {"stage", name(t.spec.stage)},
         {"hosts", names},
         {"outcome", name(t.measurement.outcome)},
         {"reason", t.measurement.reason.empty() ? nlohmann::json() : nlohmann::json(t.measurement.reason)},
         {"latency_us", json_or_null(t.measurement.latency_us)},
         {"busbw_gbps", json_or_null(t.measurement.busbw_gbps)},
         {"host_busy", t.measurement.host_busy ? nlohmann::json(*t.measurement.host_busy) : nlohmann::json()},
         {"elapsed_s", t.end.elapsed_s},
         {"launcher_exit", t.end.exit_status},
         {"killed_at_deadline", t.end.killed_at_deadline},
         {"straggler", t.straggler.is_null() ? nlohmann::json() : t.straggler},
         {"result_file",
          fs::exists(t.result_file) ? nlohmann::json(relative_to(t.result_file, out_abs)) : nlohmann::json()},
         {"log_file", relative_to(t.job.log_file, out_abs)},
         {"command", t.job.argv}});
  }
  return j;
}

int screen_main(int argc, char** argv) {
  ScreenOptions o;
  if (const auto exit = parse_screen_flags(argc, argv, o)) return *exit;

  // What the screen needs to run at all.
  if (o.ccbench.empty()) {
    std::error_code ec;
    o.ccbench = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec || o.ccbench.empty()) o.ccbench = argv[0];
  }
  const fs::path tests_dir = o.out / "tests";
  {
    std::error_code ec;
    fs::create_directories(tests_dir, ec);
    if (ec) {
      std::fprintf(stderr, "ccbench screen: cannot run: --out %s: %s\n", o.out.string().c_str(), ec.message().c_str());
      return kExitCouldNotRun;
    }
  }
  const fs::path out_abs = fs::absolute(o.out);

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);

  const std::string started_at = utc_timestamp_now();
  const auto t0 = std::chrono::steady_clock::now();
  const int n = static_cast<int>(o.hosts.size());
  std::fprintf(stderr,
               "screen: %d hosts from %s, %d rank(s) each, %s %s %s..%s, -T %g s, test deadline %g s, concurrency %s\n",
               n, o.hosts_source.c_str(), o.ranks_per_host, o.launcher_name.c_str(), o.op.c_str(),
               format_bytes(o.small_bytes).c_str(), format_bytes(o.large_bytes).c_str(), o.timeout_s, o.test_timeout_s,
               o.concurrency == 0 ? "unlimited" : std::to_string(o.concurrency).c_str());

  // Every test's `ccbench run` reads its host's load (docs/host-load.md); where several tests share one
  // host's cores (the emulated fabric), the others are this screen's own work, not a busy host.
  const std::string owner = fmt::format("screen-{}-{}", ::getpid(), started_at);
  ::setenv("CCBENCH_LOAD_OWNER", owner.c_str(), 1);
  Search search(n, o.criteria, o.concurrency);
  std::vector<ScreenTest> done;
  bool launched_any = false;
  for (auto round = search.next_round(); !round.empty(); round = search.next_round()) {
    std::vector<ScreenTest> runs;
    for (const TestSpec& spec : round) runs.push_back(make_screen_test(o, spec, o.hosts, out_abs / "tests"));
    if (!run_round(runs, o, o.hosts)) {
      std::fprintf(stderr, "ccbench screen: interrupted by signal %d; tests so far are in %s\n", g_signal.load(),
                   o.out.string().c_str());
      return 128 + g_signal.load();
    }
    for (ScreenTest& t : runs) {
      // A rank that started (a result file) or a host the launcher could not reach is a result;
      // a launcher that fails the same way for every host before any rank starts is not.
      if (fs::exists(t.result_file) || t.measurement.outcome == Outcome::unreachable || t.end.killed_at_deadline)
        launched_any = true;
      search.record(t.spec.id, t.measurement);
      done.push_back(std::move(t));
    }
  }
  if (!launched_any) {
    // `ccbench run` refused its arguments (a flag screen passes through): its own message, exit 2.
    for (const ScreenTest& t : done) {
      std::stringstream log(launch::collect(t.job.log_file, {}).log);
      for (std::string line; std::getline(log, line);)
        if (line.rfind("ccbench run: ", 0) == 0) {
          std::fprintf(stderr, "ccbench screen: every test's `ccbench run` refused its arguments: %s\n", line.c_str());
          return exit_code::usage;
        }
    }
    std::fprintf(stderr, "ccbench screen: cannot run: no test started a rank: %s (see %s)\n",
                 done.empty() ? "no tests" : done.front().measurement.reason.c_str(),
                 done.empty() ? "" : done.front().job.log_file.string().c_str());
    return kExitCouldNotRun;
  }
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // ---- outputs -------------------------------------------------------------------------------------
  const HostLists lists = host_lists(search.hosts(), o.hosts, o.unjudged);
  const std::vector<std::string>& healthy = lists.healthy;
  const std::vector<std::string>& bad = lists.excluded;
  // Exit 0 only when every host was shown healthy: --unjudged chooses the lists, not the verdict.
  const bool all_healthy =
      std::ranges::all_of(search.hosts(), [](const HostResult& r) { return r.verdict == Verdict::healthy; });
  const int exit = all_healthy ? exit_code::ok : kExitSomeBad;

  print_table(search, o, elapsed_s);
  const nlohmann::json j = screen_json(search, o, done, Timing{started_at, elapsed_s}, exit, argc, argv);
  bool wrote = true;
  auto write = [&](const fs::path& p, const std::string& text, const char* what) {
    try {
      write_file_atomically(p, text);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ccbench screen: %s %s: %s\n", what, p.string().c_str(), e.what());
      wrote = false;
    }
  };
  write(o.out / "screen.json", j.dump(2) + "\n", "screen file");
  if (!o.healthy_out.empty()) {
    std::string text =
        fmt::format("# healthy hosts of ccbench screen {} ({} of {}; unjudged hosts {})\n", o.out.string(),
                    healthy.size(), n, o.unjudged == UnjudgedHosts::include ? "included" : "left out");
    text += launch::hostfile_text(healthy, o.ranks_per_host);
    write(o.healthy_out, text, "--healthy-out");
  }
  if (!o.exclude_out.empty()) write(o.exclude_out, join(bad, ",") + "\n", "--exclude-out");
  std::printf("# screen file: %s\n", (o.out / "screen.json").string().c_str());
  if (!wrote) return kExitCouldNotRun;
  return exit;
}

const bool registered =
    register_command({"screen", "find the bad hosts of an allocation (launched from a shell)", &screen_main});

}  // namespace
}  // namespace ccbench::cli
