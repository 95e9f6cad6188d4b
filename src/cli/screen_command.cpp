// `ccbench screen`: finds the bad hosts of an allocation (docs/screen.md). Launched from a shell;
// starts the launcher (mpirun or srun) itself, once per test, each test an ordinary `ccbench run`
// under its watchdog writing an ordinary result file. The search (which tests, who is blamed) is
// src/screen/search.hpp; this file runs the tests and writes the outputs. It never loads MPI.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cli/command.hpp"
#include "cli/number_flags.hpp"
#include "core/bandwidth.hpp"
#include "core/error.hpp"
#include "core/result.hpp"
#include "core/sizes.hpp"
#include "core/types.hpp"
#include "screen/hosts.hpp"
#include "screen/search.hpp"
#include "sweep/flag_suggestion.hpp"
#include "system/instance_profile.hpp"

namespace ccbench::cli {
namespace {

namespace fs = std::filesystem;
using namespace ccbench::screen;

constexpr int kScreenVersion = 2;
constexpr int kExitSomeBad = 1;
constexpr int kExitCouldNotRun = 3;

struct ScreenOptions {
  std::vector<std::string> hosts;
  std::string hosts_source;  // --hosts, --hostfile FILE or SLURM_JOB_NODELIST
  int ranks_per_host = 1;
  std::string backend = "mpi";
  std::string path;  // nccl only
  std::string launcher = "mpirun";
  std::vector<std::string> launcher_args;
  std::string op = "allreduce";
  std::uint64_t small_bytes = 8;
  std::uint64_t large_bytes = 4ull << 20;
  std::string iters = "10";
  int warmup = 2;
  double timeout_s = 30;
  double max_time_per_size_s = 2;
  double test_timeout_s = 0;  // 0: 2 * timeout + 60
  std::vector<std::string> run_args;
  int concurrency = 0;
  Criteria criteria;
  fs::path out;
  fs::path healthy_out;
  fs::path exclude_out;
  std::string ccbench;
  bool per_rank = true;  // every test runs with --per-rank (stragglers by rank and host)
};

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && ::access((fs::path(dir) / program).c_str(), X_OK) == 0) return true;
  return false;
}

// ---- one test: the launcher command, the process, the outcome --------------------------------------

struct TestRun {
  TestSpec spec;
  std::vector<std::string> argv;
  fs::path result_file;  // absolute
  fs::path log_file;
  pid_t pid = -1;
  std::chrono::steady_clock::time_point started;
  double elapsed_s = 0;
  int exit_status = 0;  // launcher's exit code (128 + signal when a signal ended it)
  int signal = 0;       // the signal that ended the launcher, 0 if it exited
  bool killed = false;  // by the screen at the test deadline
  Measurement measurement;
  std::optional<int> result_exit_code;
  std::string result_status;
  nlohmann::json straggler;  // the large size's last arrival most often, from the row's per_rank
};

std::string test_stem(const TestSpec& t, const std::vector<std::string>& names) {
  std::string stem = fmt::format("{:03d}-{}", t.id, name(t.stage));
  for (int h : t.hosts) stem += "-" + names[static_cast<std::size_t>(h)];
  // A file name has at most 255 bytes, and the result file's atomic write adds a suffix: long host
  // names give way to their indices in the host list (the id keeps the stem unique).
  if (stem.size() > 100) {
    stem = fmt::format("{:03d}-{}", t.id, name(t.stage));
    for (int h : t.hosts) stem += fmt::format("-host{}", h);
  }
  return stem;
}

std::vector<std::string> launcher_argv(const ScreenOptions& o, const std::vector<std::string>& hosts,
                                       const fs::path& result_file, const std::string& label) {
  std::vector<std::string> a;
  const int ranks = static_cast<int>(hosts.size()) * o.ranks_per_host;
  if (o.launcher == "mpirun") {
    std::vector<std::string> spec;
    for (const auto& h : hosts) spec.push_back(fmt::format("{}:{}", h, o.ranks_per_host));
    a = {"mpirun", "-np", std::to_string(ranks), "--host", join(spec, ",")};
  } else {
    // --ntasks too: inside an allocation srun otherwise takes the allocation's SLURM_NTASKS and
    // refuses a step on fewer nodes ("More processors requested than permitted").
    a = {"srun", fmt::format("--nodes={}", hosts.size()), fmt::format("--ntasks={}", ranks),
         fmt::format("--ntasks-per-node={}", o.ranks_per_host), fmt::format("--nodelist={}", join(hosts, ","))};
  }
  a.insert(a.end(), o.launcher_args.begin(), o.launcher_args.end());
  std::vector<std::string> run = {o.ccbench,
                                  "run",
                                  "--backend",
                                  o.backend,
                                  "--ops",
                                  o.op,
                                  "-b",
                                  std::to_string(o.small_bytes),
                                  "-e",
                                  std::to_string(o.large_bytes),
                                  "-i",
                                  std::to_string(o.large_bytes - o.small_bytes),
                                  "--in-place",
                                  "no",
                                  "-w",
                                  std::to_string(o.warmup),
                                  "-n",
                                  o.iters,
                                  "--max-time-per-size",
                                  fmt::format("{}", o.max_time_per_size_s),
                                  "-T",
                                  fmt::format("{}", o.timeout_s),
                                  "--progress",
                                  "never",
                                  "--label",
                                  label,
                                  "-J",
                                  result_file.string()};
  if (!o.path.empty()) run.insert(run.end(), {"--path", o.path});
  if (o.per_rank) run.push_back("--per-rank");
  run.insert(run.end(), o.run_args.begin(), o.run_args.end());
  a.insert(a.end(), run.begin(), run.end());
  return a;
}

// Starts the launcher in a process group of its own (so the whole job can be ended), output to
// the test's log file. Returns false when fork fails.
bool start(TestRun& t) {
  const int fd = ::open(t.log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const std::string header = "# " + [&] {
    std::vector<std::string> q;
    for (const auto& a : t.argv) q.push_back(quote(a));
    return join(q, " ");
  }() + "\n";
  if (::write(fd, header.data(), header.size()) < 0) {
    ::close(fd);
    return false;
  }
  std::vector<char*> args;
  for (auto& a : t.argv) args.push_back(a.data());
  args.push_back(nullptr);
  t.started = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    return false;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "ccbench screen: cannot start %s: %s\n", args[0], std::strerror(errno));
    std::_Exit(127);
  }
  ::setpgid(pid, pid);
  ::close(fd);
  t.pid = pid;
  return true;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  const auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// A launcher line that says a host could not be reached (Open MPI through ssh or our emulation
// agent, Slurm's srun).
std::optional<std::string> unreachable_line(const std::string& log) {
  static const char* const patterns[] = {
      "ORTE was unable to reliably start one or more daemons",
      "is not an emulated host",
      "Could not resolve hostname",
      "ssh: connect to host",
      "Host key verification failed",
      "Permission denied (publickey",
      "No route to host",
      "Invalid node name specified",
      "Unable to resolve",
      "srun: error: Nodes required for job are DOWN",
  };
  std::stringstream lines(log);
  std::string line;
  std::optional<std::string> first;
  while (std::getline(lines, line)) {
    for (const char* p : patterns) {
      if (line.find(p) == std::string::npos) continue;
      // Prefer the line that names the host.
      const std::string l = trim(line);
      if (!first || l.find("host") != std::string::npos) first = l;
      break;
    }
  }
  return first;
}

// The line of the log that best says what went wrong: the first one naming a cause (ccbench's
// watchdog, a dead peer, a connection the transport could not make), else the last error line.
std::string error_line(const std::string& log) {
  static const char* const causes[] = {"timeout:",    "peer failed",        "is stopped",      "Unable to connect",
                                       "unreachable", "Connection refused", "exited on signal"};
  static const char* const errors[] = {"error", "ERROR", "FATAL", "ccbench", "exited", "abort"};
  std::stringstream lines(log);
  std::string line, last;
  while (std::getline(lines, line)) {
    const std::string l = trim(line);
    if (l.empty() || l[0] == '#' || l.find("setpgid") != std::string::npos) continue;
    for (const char* c : causes)
      if (l.find(c) != std::string::npos) return l;
    for (const char* e : errors)
      if (l.find(e) != std::string::npos) last = l;
  }
  return last;
}

void judge(TestRun& t, const ScreenOptions& o) {
  const std::string log = read_text(t.log_file);
  std::optional<ResultFile> file;
  std::string load_error;
  if (fs::exists(t.result_file)) {
    try {
      file = load_result_file(t.result_file);
      t.result_status = file->run.status;
      t.result_exit_code = file->run.exit_code;
    } catch (const std::exception& e) {
      load_error = e.what();
    }
  }
  Measurement& m = t.measurement;
  const std::string exit_text = t.signal != 0 ? fmt::format("launcher ended by signal {}", t.signal)
                                              : fmt::format("launcher exit {}", t.exit_status);
  if (t.killed) {
    m.outcome = Outcome::failed;
    m.reason = fmt::format(
        "no end within {:.0f} s (the test deadline): killed by the screen; a stopped rank or a "
        "launcher that cannot end",
        o.test_timeout_s);
    if (file && file->run.error) {
      m.reason += "; the result file says: " + *file->run.error;
    } else if (const std::string line = error_line(log); !line.empty()) {
      m.reason += "; the log says: " + line;
    }
    return;
  }
  if (t.exit_status == 0 && file && file->run.status == "complete") {
    // The small size's median time and the large size's busbw (median over trials).
    std::vector<double> small_us, large_gbps;
    for (const auto& row : file->results) {
      if (row.op != o.op || row.in_place) continue;
      if (row.bytes == o.small_bytes) small_us.push_back(row.time_us.median);
      if (row.bytes == o.large_bytes && row.ranks > 1) large_gbps.push_back(row.busbw_gbps);
    }
    if (small_us.empty()) {
      m.outcome = Outcome::failed;
      m.reason = fmt::format("the result file has no {} row of {} bytes", o.op, o.small_bytes);
      return;
    }
    for (const auto& row : file->results) {
      if (row.op != o.op || row.in_place || row.bytes != o.large_bytes || !row.extra.contains("per_rank")) continue;
      const auto& pr = row.extra["per_rank"];
      try {
        const auto& last = pr.at("last_arrivals");
        std::size_t worst = 0;
        int total = 0;
        for (std::size_t r = 0; r < last.size(); ++r) {
          total += last[r].get<int>();
          if (last[r].get<int>() > last[worst].get<int>()) worst = r;
        }
        if (last.size() > 1 && total > 0)
          t.straggler = {{"rank", worst},
                         {"host", pr.at("hosts").at(worst)},
                         {"last_arrivals", last[worst]},
                         {"samples", total},
                         {"median_us", pr.at("median_us").at(worst)}};
      } catch (const nlohmann::json::exception&) {
        // a row from another tool: no straggler to name
      }
      break;
    }
    // One rank alone measures no transfer (a local copy): only that it ran is judged.
    if (t.spec.hosts.size() * static_cast<std::size_t>(o.ranks_per_host) < 2) return;
    m.latency_us = median_of(small_us);
    if (!large_gbps.empty()) m.busbw_gbps = median_of(large_gbps);
    return;
  }
  if (!file) {
    if (auto line = unreachable_line(log)) {
      m.outcome = Outcome::unreachable;
      m.reason = *line;
      return;
    }
    m.retry = true;  // no rank started and no deadline passed: the launcher's own failure
  }
  m.outcome = Outcome::failed;
  if (file && file->run.error) {
    m.reason = fmt::format("{} ({}; result file {}, exit_code {})", *file->run.error, exit_text, file->run.status,
                           file->run.exit_code);
  } else {
    std::string line = error_line(log);
    if (line.empty()) line = load_error.empty() ? "no result file" : load_error;
    m.reason = fmt::format("{} ({})", line, exit_text);
  }
}

// ---- the screen --------------------------------------------------------------------------------------

std::atomic<int> g_signal{0};
void on_signal(int sig) { g_signal = sig; }

void end_group(pid_t pid) {
  ::kill(-pid, SIGCONT);  // a stopped process group would never act on SIGTERM
  ::kill(-pid, SIGTERM);
}

// Runs one round's tests, at most `concurrency` at once (0: all), each bounded by the deadline.
// Returns false when interrupted by a signal.
bool run_round(std::vector<TestRun>& round, const ScreenOptions& o, const std::vector<std::string>& names) {
  const std::size_t limit = o.concurrency == 0 ? round.size() : static_cast<std::size_t>(o.concurrency);
  std::size_t next = 0, running = 0, finished = 0;
  std::map<pid_t, std::size_t> live;
  std::map<pid_t, std::chrono::steady_clock::time_point> term_sent;
  while (finished < round.size()) {
    while (running < limit && next < round.size()) {
      TestRun& t = round[next++];
      if (!start(t)) {
        t.exit_status = 127;
        t.measurement.outcome = Outcome::failed;
        t.measurement.reason = fmt::format("could not start the launcher: {}", std::strerror(errno));
        ++finished;
        continue;
      }
      live[t.pid] = static_cast<std::size_t>(&t - round.data());
      ++running;
      // Launchers started in the same instant race for shared state (Open MPI's session folder:
      // "A call to mkdir was unable to create the desired directory ... File exists", measured on
      // 2 of 30 emulated screens): a short gap between starts.
      if (next < round.size() && running < limit) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    const auto now = std::chrono::steady_clock::now();
    if (pid > 0 && live.count(pid)) {
      TestRun& t = round[live[pid]];
      live.erase(pid);
      ::kill(-pid, SIGKILL);  // whatever the launcher left in its group
      --running;
      ++finished;
      t.elapsed_s = std::chrono::duration<double>(now - t.started).count();
      t.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      t.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      judge(t, o);
      std::string hosts;
      for (int h : t.spec.hosts) hosts += (hosts.empty() ? "" : ",") + names[static_cast<std::size_t>(h)];
      std::string what = std::string(name(t.measurement.outcome));
      if (t.measurement.outcome == Outcome::ok && !t.measurement.latency_us) {
        what = "ran (one rank: no transfer to time)";
      } else if (t.measurement.outcome == Outcome::ok) {
        what = fmt::format("latency {:.1f} us", t.measurement.latency_us.value_or(0));
        if (t.measurement.busbw_gbps) what += fmt::format(", busbw {:.3f} GB/s", *t.measurement.busbw_gbps);
      } else {
        what += ": " + t.measurement.reason;
      }
      std::fprintf(stderr, "screen: test %d (%s %s) %.1f s: %s\n", t.spec.id, std::string(name(t.spec.stage)).c_str(),
                   hosts.c_str(), t.elapsed_s, what.c_str());
      continue;
    }
    for (auto& [p, index] : live) {
      TestRun& t = round[index];
      const double age = std::chrono::duration<double>(now - t.started).count();
      if (age > o.test_timeout_s && !term_sent.count(p)) {
        t.killed = true;
        end_group(p);
        term_sent[p] = now;
      } else if (term_sent.count(p) && std::chrono::duration<double>(now - term_sent[p]).count() > 5.0) {
        ::kill(-p, SIGKILL);
      }
    }
    if (g_signal != 0) {
      for (auto& [p, index] : live) {
        end_group(p);
        ::kill(-p, SIGKILL);
        int ignored = 0;
        ::waitpid(p, &ignored, 0);
      }
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

nlohmann::json json_or_null(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::string relative_to(const fs::path& p, const fs::path& dir) { return fs::relative(p, dir).generic_string(); }

int screen_main(int argc, char** argv) {
  CLI::App app{
      "Find the bad hosts of an allocation: each host alone, then neighbours in a ring over the network, then\n"
      "suspects beside hosts shown healthy. Starts the launcher itself, once per test; each test is an ordinary\n"
      "`ccbench run` under its watchdog. Arguments after -- go to the launcher.\n"
      "Exit: 0 all healthy, 1 some not (the healthy list is still written), 2 usage, 3 the screen could not run.",
      "ccbench screen"};
  ScreenOptions o;
  std::string hosts_text, hostfile, small = "8", large = "4M", instance_type;
  std::optional<double> expect_busbw, expect_latency;
  app.add_option("--hosts", hosts_text, "comma-separated host names");
  app.add_option("--hostfile", hostfile, "Open MPI hostfile (host [slots=N] per line)");
  app.add_option("--ranks-per-host", o.ranks_per_host, "ranks on each host (default 1)")->check(CLI::Range(1, 1024));
  app.add_option("--backend", o.backend, "mpi | nccl (default mpi)")->check(CLI::IsMember({"mpi", "nccl"}));
  app.add_option("--path", o.path, "nvlink | efa | all (nccl)")->check(CLI::IsMember({"nvlink", "efa", "all"}));
  app.add_option("--launcher", o.launcher, "mpirun | srun (default mpirun)")->check(CLI::IsMember({"mpirun", "srun"}));
  app.add_option("--launcher-arg", o.launcher_args, "one argument for the launcher (repeatable; or after --)")
      ->allow_extra_args(false);
  app.add_option("--op", o.op, "the collective of every test (default allreduce)")
      ->check(CLI::IsMember({"allreduce", "allgather", "alltoall", "reduce_scatter", "broadcast"}));
  app.add_option("-b,--small-bytes", small, "the latency-bound size (default 8)");
  app.add_option("-e,--large-bytes", large, "the bandwidth-bound size (default 4M)");
  app.add_option("-n,--iters", o.iters, "samples per size, or auto (default 10)");
  app.add_option("-w,--warmup", o.warmup, "warm-up ops per size (default 2)")->check(CLI::Range(0, 100000));
  app.add_option("-T,--timeout", o.timeout_s, "each test's watchdog, seconds (default 30)")
      ->check(finite_number())
      ->check(CLI::Range(1.0, 1e6));
  app.add_option("--max-time-per-size", o.max_time_per_size_s, "seconds of samples per size (default 2)")
      ->check(finite_number())
      ->check(CLI::Range(0.01, 1e6));
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
  std::string judge = "both";
  app.add_option("--judge", judge, "busbw | latency | both (default both)")
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

  try {
    if (!hosts_text.empty() && !hostfile.empty()) throw UsageError("--hosts and --hostfile: give one of them");
    if (!hosts_text.empty()) {
      o.hosts = parse_host_list(hosts_text, "--hosts");
      o.hosts_source = "--hosts";
    } else if (!hostfile.empty()) {
      o.hosts = read_hostfile(hostfile);
      o.hosts_source = "--hostfile " + hostfile;
    } else if (const char* nodes = std::getenv("SLURM_JOB_NODELIST"); nodes && *nodes) {
      o.hosts = expand_slurm_nodelist(nodes, "SLURM_JOB_NODELIST");
      o.hosts_source = "SLURM_JOB_NODELIST";
    } else {
      throw UsageError("no hosts: give --hosts or --hostfile, or run inside a Slurm allocation (SLURM_JOB_NODELIST)");
    }
    auto bytes = [](const char* flag, const std::string& text) {
      try {
        return parse_bytes(text);
      } catch (const UsageError& e) {
        throw UsageError(fmt::format("{}: {}", flag, e.what()));
      }
    };
    o.small_bytes = bytes("-b/--small-bytes", small);
    o.large_bytes = bytes("-e/--large-bytes", large);
    if (o.small_bytes == 0 || o.large_bytes <= o.small_bytes)
      throw UsageError(
          fmt::format("-b/--small-bytes {} and -e/--large-bytes {}: need 0 < small < large", small, large));
    if (!o.path.empty() && o.backend != "nccl") throw UsageError("--path: only with --backend nccl");
    if (o.iters != "auto") {
      unsigned long long n_iters = 0;
      const auto [end, ec] = std::from_chars(o.iters.data(), o.iters.data() + o.iters.size(), n_iters);
      if (ec != std::errc() || end != o.iters.data() + o.iters.size() || n_iters == 0 || n_iters > 100000000)
        throw UsageError(fmt::format("-n/--iters {}: give a count of samples >= 1, or auto", o.iters));
    }
    if (o.test_timeout_s == 0) o.test_timeout_s = 2 * o.timeout_s + 60;
    o.criteria.judge_busbw = judge != "latency";
    o.criteria.judge_latency = judge != "busbw";
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
      if (path.empty()) continue;
      const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
      if (!fs::is_directory(dir) || ::access(dir.c_str(), W_OK) != 0)
        throw UsageError(fmt::format("{} {}: folder {} does not exist or is not writable (checked before any test)",
                                     flag, path.string(), dir.string()));
      if (fs::is_directory(path)) throw UsageError(fmt::format("{} {}: is a folder", flag, path.string()));
    }
    if (fs::exists(o.out)) throw UsageError(fmt::format("--out {}: exists; choose a new folder", o.out.string()));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ccbench screen: %s\n", e.what());
    return exit_code::usage;
  }

  // What the screen needs to run at all.
  if (o.ccbench.empty()) {
    std::error_code ec;
    o.ccbench = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec || o.ccbench.empty()) o.ccbench = argv[0];
  }
  if (!on_path(o.launcher)) {
    std::fprintf(stderr, "ccbench screen: cannot run: the launcher '%s' is not on PATH\n", o.launcher.c_str());
    return kExitCouldNotRun;
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
               n, o.hosts_source.c_str(), o.ranks_per_host, o.launcher.c_str(), o.op.c_str(),
               format_bytes(o.small_bytes).c_str(), format_bytes(o.large_bytes).c_str(), o.timeout_s, o.test_timeout_s,
               o.concurrency == 0 ? "unlimited" : std::to_string(o.concurrency).c_str());

  Search search(n, o.criteria, o.concurrency);
  std::vector<TestRun> done;
  bool launched_any = false;
  for (auto round = search.next_round(); !round.empty(); round = search.next_round()) {
    std::vector<TestRun> runs;
    for (const TestSpec& spec : round) {
      TestRun t;
      t.spec = spec;
      std::vector<std::string> names;
      for (int h : spec.hosts) names.push_back(o.hosts[static_cast<std::size_t>(h)]);
      const std::string stem = test_stem(spec, o.hosts);
      t.result_file = out_abs / "tests" / (stem + ".json");
      t.log_file = out_abs / "tests" / (stem + ".log");
      t.argv = launcher_argv(o, names, t.result_file, "screen-" + stem);
      runs.push_back(std::move(t));
    }
    if (!run_round(runs, o, o.hosts)) {
      std::fprintf(stderr, "ccbench screen: interrupted by signal %d; tests so far are in %s\n", g_signal.load(),
                   o.out.string().c_str());
      return 128 + g_signal.load();
    }
    for (TestRun& t : runs) {
      // A rank that started (a result file) or a host the launcher could not reach is a result;
      // a launcher that fails the same way for every host before any rank starts is not.
      if (fs::exists(t.result_file) || t.measurement.outcome == Outcome::unreachable || t.killed) launched_any = true;
      search.record(t.spec.id, t.measurement);
      done.push_back(std::move(t));
    }
  }
  if (!launched_any) {
    // `ccbench run` refused its arguments (a flag screen passes through): its own message, exit 2.
    for (const TestRun& t : done) {
      std::stringstream log(read_text(t.log_file));
      for (std::string line; std::getline(log, line);)
        if (line.rfind("ccbench run: ", 0) == 0) {
          std::fprintf(stderr, "ccbench screen: every test's `ccbench run` refused its arguments: %s\n", line.c_str());
          return exit_code::usage;
        }
    }
    std::fprintf(stderr, "ccbench screen: cannot run: no test started a rank: %s (see %s)\n",
                 done.empty() ? "no tests" : done.front().measurement.reason.c_str(),
                 done.empty() ? "" : done.front().log_file.string().c_str());
    return kExitCouldNotRun;
  }
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // ---- outputs -------------------------------------------------------------------------------------
  std::vector<std::string> healthy, bad;
  std::map<Verdict, int> counts;
  for (int h = 0; h < n; ++h) {
    const HostResult& r = search.hosts()[static_cast<std::size_t>(h)];
    ++counts[r.verdict];
    (r.verdict == Verdict::healthy ? healthy : bad).push_back(o.hosts[static_cast<std::size_t>(h)]);
  }
  const int exit = bad.empty() ? exit_code::ok : kExitSomeBad;

  auto evidence_of = [&](const HostResult& r, Stage stage, Metric metric) -> const Evidence* {
    for (const Evidence& e : r.evidence)
      if (e.stage == stage && e.metric == metric) return &e;
    return nullptr;
  };

  // Table.
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
      return fmt::format("{:.4g}{} ({:.4g})", e->measured, mark, e->floor);
    };
    std::string reason = r.reason;
    for (const Evidence& e : r.evidence) {
      if (e.judged) continue;
      if (!reason.empty()) reason += "; ";
      reason += fmt::format("{}{} not judged: ", e.stage == Stage::solo ? "alone " : "",
                            e.metric == Metric::busbw_gbps ? "busbw" : "latency");
      reason += e.noise ? fmt::format("noise +-{:.0f}% over {} test(s), margin {:.0f}%", 100.0 * *e.noise, e.tests,
                                      margin_pct(e.metric))
                        : std::string("no test beside a host shown healthy");
    }
    std::vector<std::string> ids;
    for (int id : r.implicating_tests) ids.push_back(std::to_string(id));
    std::printf("%-16s %-12s %-24s %-24s %-12s %s\n", o.hosts[static_cast<std::size_t>(h)].c_str(),
                std::string(name(r.verdict)).c_str(), cell(Metric::busbw_gbps).c_str(),
                cell(Metric::latency_us).c_str(), ids.empty() ? "-" : join(ids, ",").c_str(), reason.c_str());
  }

  // Screen JSON.
  nlohmann::json j;
  j["screen_version"] = kScreenVersion;
  j["tool"] = {{"name", "ccbench"}, {"version", CCBENCH_VERSION}};
  j["started_at"] = started_at;
  j["finished_at"] = utc_timestamp_now();
  j["elapsed_s"] = elapsed_s;
  j["command"] = std::vector<std::string>(argv, argv + argc);
  j["config"] = {{"hosts_source", o.hosts_source},
                 {"ranks_per_host", o.ranks_per_host},
                 {"backend", o.backend},
                 {"path", o.path.empty() ? nlohmann::json() : nlohmann::json(o.path)},
                 {"launcher", o.launcher},
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
                 {"judge", judge},
                 {"expect_busbw_gbps", json_or_null(o.criteria.expect_busbw_gbps)},
                 {"expect_latency_us", json_or_null(o.criteria.expect_latency_us)}};
  j["summary"] = {{"hosts", n},
                  {"tests", search.tests().size()},
                  {"rounds", search.rounds()},
                  {"healthy", counts[Verdict::healthy]},
                  {"slow", counts[Verdict::slow]},
                  {"failed", counts[Verdict::failed]},
                  {"unreachable", counts[Verdict::unreachable]},
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
    for (const Evidence& e : r.evidence) {
      ev.push_back({{"stage", e.stage == Stage::solo ? "solo" : "network"},
                    {"metric", name(e.metric)},
                    {"measured", e.measured},
                    {"floor", e.floor},
                    {"tests", e.tests},
                    {"ratio", json_or_null(e.ratio)},
                    {"noise", json_or_null(e.noise)},
                    {"p_value", json_or_null(e.p_value)},
                    {"beyond", e.beyond},
                    {"judged", e.judged}});
      if (!e.judged)
        not_judged.push_back({{"stage", e.stage == Stage::solo ? "solo" : "network"},
                              {"metric", name(e.metric)},
                              {"tests", e.tests},
                              {"noise", json_or_null(e.noise)}});
    }
    j["hosts"].push_back({{"name", o.hosts[static_cast<std::size_t>(h)]},
                          {"verdict", name(r.verdict)},
                          {"reason", r.reason.empty() ? nlohmann::json() : nlohmann::json(r.reason)},
                          {"evidence", ev},
                          {"not_judged", not_judged},
                          {"implicating_tests", r.implicating_tests}});
  }
  j["tests"] = nlohmann::json::array();
  for (const TestRun& t : done) {
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
         {"elapsed_s", t.elapsed_s},
         {"launcher_exit", t.exit_status},
         {"killed_at_deadline", t.killed},
         {"straggler", t.straggler.is_null() ? nlohmann::json() : t.straggler},
         {"result_file",
          fs::exists(t.result_file) ? nlohmann::json(relative_to(t.result_file, out_abs)) : nlohmann::json()},
         {"log_file", relative_to(t.log_file, out_abs)},
         {"command", t.argv}});
  }
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
        fmt::format("# healthy hosts of ccbench screen {} ({} of {})\n", o.out.string(), healthy.size(), n);
    for (const auto& h : healthy) text += fmt::format("{} slots={}\n", h, o.ranks_per_host);
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
