// The run of a screen (screen/screen_run.hpp) in one process: a fake launcher behind
// launch::JobProcesses and a fake clock behind launch::JobClock, so a test that never ends, a
// signal and --concurrency are exercised without starting a process or waiting. Times are the fake
// clock's, so they are exact: the run loop polls every 50 ms (RunLimits::poll) and leaves 200 ms
// between starts (RunLimits::start_gap).
#include "screen/screen_run.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "core/error.hpp"

namespace ccbench::screen {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class FakeClock final : public launch::JobClock {
 public:
  Clock::time_point now() override { return now_; }
  void sleep_for(std::chrono::milliseconds duration) override {
    now_ += duration;
    if (on_sleep) on_sleep(seconds());
  }
  double seconds() const { return std::chrono::duration<double>(now_ - Clock::time_point{}).count(); }
  std::function<void(double now_s)> on_sleep;

 private:
  Clock::time_point now_{};
};

// How one fake test behaves: it ends by itself after runs_s (never when absent) with exit_status,
// and SIGTERM ends it unless it ignores TERM (then only SIGKILL does).
struct Behaviour {
  std::optional<double> runs_s;
  int exit_status = 0;
  bool ignores_term = false;
  std::string log;  // what it writes to its log after the command line
};

class FakeLauncher final : public launch::JobProcesses {
 public:
  struct Started {
    launch::Job job;
    double started_s = 0;
    std::optional<double> ends_s;  // when it ends (by itself, or by a signal)
    int exit_status = 0;
    int signal = 0;
    bool ignores_term = false;
    std::optional<double> terminated_s, killed_s;  // signals sent while it ran
    bool reaped = false;
  };

  FakeLauncher(FakeClock& clock, std::function<Behaviour(const launch::Job&)> behaviour)
      : clock_(clock), behaviour_(std::move(behaviour)) {}

  long start(const launch::Job& job, const std::string&, std::string&) override {
    const Behaviour b = behaviour_(job);
    std::ofstream(job.log_file) << "# " << launch::shell_join(job.argv) << "\n" << b.log;
    Started s{job, clock_.seconds(), {}, b.exit_status, 0, b.ignores_term, {}, {}, false};
    if (b.runs_s) s.ends_s = clock_.seconds() + *b.runs_s;
    started.push_back(s);
    max_running = std::max(max_running, running());
    return static_cast<long>(started.size());
  }
  std::optional<launch::JobExit> poll_ended() override {
    for (std::size_t i = 0; i < started.size(); ++i) {
      Started& s = started[i];
      if (s.reaped || !s.ends_s || *s.ends_s > clock_.seconds()) continue;
      s.reaped = true;
      return launch::JobExit{static_cast<long>(i + 1), s.exit_status, s.signal};
    }
    return std::nullopt;
  }
  void terminate(long id) override {
    Started& s = of(id);
    if (s.reaped) return;
    s.terminated_s = clock_.seconds();
    if (!s.ignores_term) end_by(s, SIGTERM);
  }
  void kill(long id) override {  // also sent to a reaped job's group: whatever it left
    Started& s = of(id);
    if (s.reaped) return;
    s.killed_s = clock_.seconds();
    end_by(s, SIGKILL);
  }
  void wait(long id) override { of(id).reaped = true; }

  std::size_t running() const {
    return static_cast<std::size_t>(std::ranges::count_if(started, [](const Started& s) { return !s.reaped; }));
  }
  std::vector<Started> started;
  std::size_t max_running = 0;

 private:
  Started& of(long id) { return started.at(static_cast<std::size_t>(id - 1)); }
  void end_by(Started& s, int sig) {
    if (s.ends_s && *s.ends_s <= clock_.seconds()) return;  // already ended, not yet reaped
    s.ends_s = clock_.seconds();
    s.exit_status = 128 + sig;
    s.signal = sig;
  }
  FakeClock& clock_;
  std::function<Behaviour(const launch::Job&)> behaviour_;
};

class ScreenRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("ccbench_screen_run_test_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    c.out = dir / "out";
    c.exclude_out = dir / "exclude.txt";
    c.healthy_out = dir / "healthy.txt";
    c.ccbench = "/opt/ccbench/bin/ccbench";
    c.test_timeout_s = 10;
    printer.started = [this] { printed.push_back("started"); };
    printer.test_ended = [this](const ScreenTest& t) { printed.push_back("test " + std::to_string(t.spec.id)); };
    printer.finished = [this](const Search&, double elapsed_s) {
      printed.push_back("finished " + std::to_string(elapsed_s));
    };
    printer.screen_file = [this](const fs::path& p) { printed.push_back("screen file " + p.string()); };
    printer.error = [this](const std::string& line) { errors.push_back(line); };
  }
  void TearDown() override { fs::remove_all(dir); }
  void hosts(int n) {
    for (int h = 0; h < n; ++h) c.hosts.push_back(fmt::format("h{}", h));
  }
  int run(FakeLauncher& launcher) {
    return run_screen(c, ScreenProvenance{{"ccbench", "screen"}, "9.9.9", "", 0}, interrupt, printer,
                      launch::JobRuntime{launcher, clock});
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  nlohmann::json screen_file() { return nlohmann::json::parse(read(c.out / "screen.json")); }

  fs::path dir;
  ScreenConfig c;
  FakeClock clock;
  std::atomic<int> interrupt{0};
  ScreenPrinter printer;
  std::vector<std::string> printed, errors;
};

TEST_F(ScreenRun, TestThatNeverEndsIsEndedAtItsDeadlineAndCountedFailed) {
  hosts(2);
  FakeLauncher launcher(clock, [](const launch::Job&) { return Behaviour{}; });
  EXPECT_EQ(run(launcher), kScreenExitSomeBad);
  ASSERT_EQ(launcher.started.size(), 2u);  // the solo round; a host failed alone is not tested further
  for (const auto& s : launcher.started) {
    // SIGTERM at the first poll past the 10 s deadline; it ends on it, reaped at the next poll.
    ASSERT_TRUE(s.terminated_s);
    EXPECT_NEAR(*s.terminated_s - s.started_s, 10.05, 1e-9);
    EXPECT_FALSE(s.killed_s);
  }
  const nlohmann::json j = screen_file();
  ASSERT_EQ(j["tests"].size(), 2u);
  for (const auto& t : j["tests"]) {
    EXPECT_EQ(t["outcome"], "failed");
    EXPECT_EQ(t["killed_at_deadline"], true);
    EXPECT_EQ(t["launcher_exit"], 128 + SIGTERM);
    EXPECT_NEAR(t["elapsed_s"].get<double>(), 10.1, 1e-9);
    EXPECT_EQ(t["reason"].get<std::string>().rfind("no end within 10 s (the test deadline)", 0), 0u) << t["reason"];
  }
  for (const auto& h : j["hosts"]) EXPECT_EQ(h["verdict"], "failed") << h;
  EXPECT_EQ(j["summary"]["failed"], 2);
  EXPECT_EQ(j["summary"]["exit_code"], kScreenExitSomeBad);
  EXPECT_EQ(j["tool"]["version"], "9.9.9");
  EXPECT_EQ(read(c.exclude_out), "h0,h1\n");
  EXPECT_EQ(read(c.healthy_out).rfind("# healthy hosts of ccbench screen " + c.out.string() + " (0 of 2;", 0), 0u);
  EXPECT_EQ(printed.front(), "started");
  EXPECT_EQ(printed.back(), "screen file " + (c.out / "screen.json").string());
  EXPECT_TRUE(errors.empty());
}

TEST_F(ScreenRun, TestThatIgnoresSigtermIsKilledAGraceLater) {
  hosts(1);
  FakeLauncher launcher(clock, [](const launch::Job&) {
    Behaviour b;
    b.ignores_term = true;
    return b;
  });
  EXPECT_EQ(run(launcher), kScreenExitSomeBad);
  ASSERT_EQ(launcher.started.size(), 1u);
  const auto& s = launcher.started[0];
  ASSERT_TRUE(s.terminated_s && s.killed_s);
  EXPECT_NEAR(*s.terminated_s - s.started_s, 10.05, 1e-9);
  EXPECT_NEAR(*s.killed_s - *s.terminated_s, 5.05, 1e-9);  // RunLimits::kill_grace_s 5, then the next poll
  const nlohmann::json t = screen_file()["tests"][0];
  EXPECT_EQ(t["outcome"], "failed");
  EXPECT_EQ(t["killed_at_deadline"], true);
  EXPECT_EQ(t["launcher_exit"], 128 + SIGKILL);
}

TEST_F(ScreenRun, SignalEndsRunningTestsAndExitsWith128PlusIt) {
  hosts(3);
  FakeLauncher launcher(clock, [](const launch::Job&) { return Behaviour{}; });
  clock.on_sleep = [&](double now_s) {
    if (now_s >= 3) interrupt = SIGINT;
  };
  EXPECT_EQ(run(launcher), 128 + SIGINT);
  ASSERT_EQ(launcher.started.size(), 3u);
  for (const auto& s : launcher.started) {
    EXPECT_NEAR(s.terminated_s.value_or(-1), 3.0, 1e-9);  // the poll that saw the signal
    EXPECT_TRUE(s.reaped);
  }
  EXPECT_EQ(launcher.running(), 0u);
  EXPECT_FALSE(fs::exists(c.out / "screen.json"));
  EXPECT_FALSE(fs::exists(c.exclude_out));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "interrupted by signal 2; tests so far are in " + c.out.string());
  EXPECT_EQ(printed, std::vector<std::string>{"started"});
}

TEST_F(ScreenRun, ConcurrencyKNeverRunsMoreThanKTests) {
  hosts(6);
  c.concurrency = 2;
  FakeLauncher launcher(clock, [](const launch::Job&) { return Behaviour{}; });
  EXPECT_EQ(run(launcher), kScreenExitSomeBad);
  EXPECT_EQ(launcher.max_running, 2u);
  ASSERT_EQ(launcher.started.size(), 6u);
  // Two at a time, each ended at its deadline: the third starts only when the first has ended.
  EXPECT_GE(launcher.started[2].started_s, *launcher.started[0].ends_s);
  // The search asks for rounds of at most K tests too: the six solo tests in three rounds.
  const nlohmann::json j = screen_file();
  ASSERT_EQ(j["tests"].size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(j["tests"][i]["round"], j["tests"][0]["round"].get<int>() + i / 2) << i;
  EXPECT_EQ(j["summary"]["rounds"], 3);
  EXPECT_EQ(j["config"]["concurrency"], 2);
}

TEST_F(ScreenRun, EveryRunRefusingItsArgumentsIsAUsageError) {
  hosts(2);
  FakeLauncher launcher(clock, [](const launch::Job&) {
    Behaviour b;
    b.runs_s = 0.5;
    b.exit_status = 2;
    b.log = "ccbench run: --ops: no such op 'x'\n";
    return b;
  });
  EXPECT_EQ(run(launcher), exit_code::usage);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "every test's `ccbench run` refused its arguments: ccbench run: --ops: no such op 'x'");
  EXPECT_FALSE(fs::exists(c.out / "screen.json"));
}

TEST_F(ScreenRun, OutThatCannotBeMadeEndsBeforeAnyTest) {
  hosts(2);
  std::ofstream(dir / "a-file") << "not a folder\n";
  c.out = dir / "a-file" / "out";
  FakeLauncher launcher(clock, [](const launch::Job&) { return Behaviour{}; });
  EXPECT_EQ(run(launcher), kScreenExitCouldNotRun);
  EXPECT_TRUE(launcher.started.empty());
  EXPECT_TRUE(printed.empty());  // not even the first line
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("cannot run: --out " + c.out.string() + ": ", 0), 0u) << errors[0];
  EXPECT_EQ(read(dir / "a-file"), "not a folder\n");
}

}  // namespace
}  // namespace ccbench::screen
