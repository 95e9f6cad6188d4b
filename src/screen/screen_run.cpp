#include "screen/screen_run.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <system_error>

#include "core/error.hpp"
#include "core/result.hpp"
#include "launch/command_line.hpp"
#include "launch/outcome.hpp"
#include "screen/outputs.hpp"

namespace ccbench::screen {
namespace {

namespace fs = std::filesystem;

// Runs one round's tests, at most c.concurrency at once (0: all), each bounded by the test
// deadline, judging each as it ends. Returns false when interrupted.
bool run_round(std::vector<ScreenTest>& round, const ScreenConfig& c, const std::atomic<int>& interrupt,
               const ScreenPrinter& printer, launch::JobRuntime runtime) {
  std::vector<launch::Job> jobs;
  for (const auto& t : round) jobs.push_back(t.job);
  launch::RunLimits limits;
  limits.concurrency = static_cast<std::size_t>(c.concurrency);
  limits.deadline_s = c.test_timeout_s;
  limits.who = "ccbench screen";
  const auto on_end = [&](std::size_t index, const launch::JobEnd& end) {
    ScreenTest& t = round[index];
    t.end = end;
    judge_screen_test(t, c);
    if (end.started) printer.test_ended(t);
  };
  return launch::run_jobs(jobs, limits, interrupt, on_end, runtime);
}

// No test started a rank: every test's `ccbench run` refused its arguments (a flag the screen
// passes through: its own message, exit 2), or the launcher failed the same way for every host.
int could_not_run(const std::vector<ScreenTest>& done, const ScreenPrinter& printer) {
  for (const ScreenTest& t : done) {
    std::stringstream log(launch::collect(t.job.log_file, {}).log);
    for (std::string line; std::getline(log, line);)
      if (line.rfind("ccbench run: ", 0) == 0) {
        printer.error("every test's `ccbench run` refused its arguments: " + line);
        return exit_code::usage;
      }
  }
  printer.error(fmt::format("cannot run: no test started a rank: {} (see {})",
                            done.empty() ? "no tests" : done.front().measurement.reason,
                            done.empty() ? "" : done.front().job.log_file.string()));
  return kScreenExitCouldNotRun;
}

// screen.json, then the host lists. Returns false when one could not be written (each said).
bool write_outputs(const Search& search, const ScreenConfig& c, const std::vector<ScreenTest>& done,
                   const ScreenProvenance& provenance, int exit, const ScreenPrinter& printer) {
  const HostLists lists = host_lists(search.hosts(), c.hosts, c.unjudged);
  bool wrote = true;
  auto write = [&](const fs::path& p, const std::string& text, const char* what) {
    try {
      write_file_atomically(p, text);
    } catch (const std::exception& e) {
      printer.error(fmt::format("{} {}: {}", what, p.string(), e.what()));
      wrote = false;
    }
  };
  write(c.out / "screen.json", screen_json(search, c, done, provenance, exit).dump(2) + "\n", "screen file");
  if (!c.healthy_out.empty()) {
    std::string text = fmt::format("# healthy hosts of ccbench screen {} ({} of {}; unjudged hosts {})\n",
                                   c.out.string(), lists.healthy.size(), c.hosts.size(),
                                   c.unjudged == UnjudgedHosts::include ? "included" : "left out");
    text += launch::hostfile_text(lists.healthy, c.ranks_per_host);
    write(c.healthy_out, text, "--healthy-out");
  }
  if (!c.exclude_out.empty())
    write(c.exclude_out, fmt::format("{}", fmt::join(lists.excluded, ",")) + "\n", "--exclude-out");
  printer.screen_file(c.out / "screen.json");
  return wrote;
}

}  // namespace

int run_screen(const ScreenConfig& c, ScreenProvenance provenance, const std::atomic<int>& interrupt,
               const ScreenPrinter& printer, launch::JobRuntime runtime) {
  const fs::path tests_dir = c.out / "tests";
  {
    std::error_code ec;
    fs::create_directories(tests_dir, ec);
    if (ec) {
      printer.error(fmt::format("cannot run: --out {}: {}", c.out.string(), ec.message()));
      return kScreenExitCouldNotRun;
    }
  }
  const fs::path out_abs = fs::absolute(c.out);
  provenance.started_at = utc_timestamp_now();
  const auto t0 = runtime.clock.now();
  printer.started();

  // Every test's `ccbench run` reads its host's load (docs/host-load.md); where several tests share one
  // host's cores (the emulated fabric), the others are this screen's own work, not a busy host.
  const std::string owner = fmt::format("screen-{}-{}", ::getpid(), provenance.started_at);
  ::setenv("CCBENCH_LOAD_OWNER", owner.c_str(), 1);
  Search search(static_cast<int>(c.hosts.size()), c.criteria, c.concurrency);
  std::vector<ScreenTest> done;
  bool launched_any = false;
  for (auto round = search.next_round(); !round.empty(); round = search.next_round()) {
    std::vector<ScreenTest> runs;
    for (const TestSpec& spec : round) runs.push_back(make_screen_test(c, spec, c.hosts, out_abs / "tests"));
    if (!run_round(runs, c, interrupt, printer, runtime)) {
      printer.error(fmt::format("interrupted by signal {}; tests so far are in {}", interrupt.load(), c.out.string()));
      return 128 + interrupt.load();
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
  if (!launched_any) return could_not_run(done, printer);
  provenance.elapsed_s = std::chrono::duration<double>(runtime.clock.now() - t0).count();

  // Exit 0 only when every host was shown healthy: --unjudged chooses the lists, not the verdict.
  const bool all_healthy =
      std::ranges::all_of(search.hosts(), [](const HostResult& r) { return r.verdict == Verdict::healthy; });
  const int exit = all_healthy ? exit_code::ok : kScreenExitSomeBad;
  printer.finished(search, provenance.elapsed_s);
  if (!write_outputs(search, c, done, provenance, exit, printer)) return kScreenExitCouldNotRun;
  return exit;
}

}  // namespace ccbench::screen
