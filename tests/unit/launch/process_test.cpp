// Jobs as real child processes: one that exits, one that hangs past its deadline (ended with its
// whole process group, SIGTERM then SIGKILL), one that crashes. Deadlines are short and the
// assertions are on how each ended, never on how long it took (the machine may be loaded).
#include "launch/process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "launch/outcome.hpp"

namespace ccbench::launch {
namespace {

namespace fs = std::filesystem;

class LaunchProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("ccbench_process_test_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
    limits.deadline_s = 0.3;
    limits.kill_grace_s = 0.3;
    limits.start_gap = std::chrono::milliseconds(0);
    limits.poll = std::chrono::milliseconds(10);
    limits.who = "process_test";
  }
  void TearDown() override { fs::remove_all(dir); }
  Job sh(const std::string& script, const std::string& log = "job.log") {
    return Job{{"/bin/sh", "-c", script}, dir / log};
  }
  std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Whether the process is gone (or a zombie nobody has reaped yet): never left running.
  static bool gone(pid_t pid) {
    for (int i = 0; i < 200; ++i) {
      std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
      std::string line;
      if (!std::getline(stat, line)) return true;
      const auto close = line.rfind(')');
      if (close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z') return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  fs::path dir;
  RunLimits limits;
};

TEST_F(LaunchProcess, ExitCodeAndLogAreCollected) {
  limits.deadline_s = 30;  // never reached
  const Job job = sh("echo 'it ran'; echo 'ccbench run: error: bad' >&2; exit 3");
  const JobEnd end = run_job(job, limits);
  EXPECT_TRUE(end.started);
  EXPECT_EQ(end.exit_status, 3);
  EXPECT_EQ(end.signal, 0);
  EXPECT_FALSE(end.killed_at_deadline);
  const Collected got = collect(job.log_file, dir / "none.json");
  EXPECT_EQ(got.log,
            "# /bin/sh -c 'echo '\\''it ran'\\''; echo '\\''ccbench run: error: bad'\\'' >&2; exit 3'\n"
            "it ran\nccbench run: error: bad\n");
  EXPECT_FALSE(got.result);
  EXPECT_EQ(classify(end, got.log), Failure::failed);
  EXPECT_EQ(error_line(got.log), "ccbench run: error: bad");
  EXPECT_EQ(classify(run_job(sh("exit 0"), limits), ""), Failure::none);
}

TEST_F(LaunchProcess, HangIsEndedWithItsGroupTermThenKill) {
  // The shell and its child ignore SIGTERM: only the SIGKILL after the grace ends them.
  const Job job = sh("trap '' TERM; sleep 30 & echo $! > " + (dir / "child.pid").string() + "; wait; wait");
  const JobEnd end = run_job(job, limits);
  EXPECT_TRUE(end.killed_at_deadline);
  EXPECT_EQ(end.signal, SIGKILL);
  EXPECT_EQ(classify(end, read(job.log_file)), Failure::hang);
  const pid_t child = std::stoi(read(dir / "child.pid"));
  EXPECT_TRUE(gone(child)) << "the launcher's child " << child << " outlived its group's end";
}

TEST_F(LaunchProcess, HangThatHeedsTermEndsBySigterm) {
  const JobEnd end = run_job(sh("sleep 30"), limits);
  EXPECT_TRUE(end.killed_at_deadline);
  EXPECT_EQ(classify(end, ""), Failure::hang);  // not a crash: the deadline ended it
}

TEST_F(LaunchProcess, SignalIsACrash) {
  limits.deadline_s = 30;
  const JobEnd end = run_job(sh("kill -SEGV $$"), limits);
  EXPECT_EQ(end.signal, SIGSEGV);
  EXPECT_EQ(end.exit_status, 128 + SIGSEGV);
  EXPECT_FALSE(end.killed_at_deadline);
  EXPECT_EQ(classify(end, ""), Failure::crash);
}

TEST_F(LaunchProcess, UnreachableHostIsNamed) {
  limits.deadline_s = 30;
  const Job job = sh("echo 'ssh: Could not resolve hostname ccb-h9: Name or service not known' >&2; exit 255");
  const JobEnd end = run_job(job, limits);
  const std::string log = read(job.log_file);
  EXPECT_EQ(classify(end, log), Failure::unreachable);
  EXPECT_EQ(unreachable_line(log), "ssh: Could not resolve hostname ccb-h9: Name or service not known");
}

TEST_F(LaunchProcess, StartFailures) {
  const JobEnd no_log = run_job(Job{{"/bin/true"}, dir / "missing" / "job.log"}, limits);
  EXPECT_FALSE(no_log.started);
  EXPECT_EQ(no_log.exit_status, 127);
  EXPECT_EQ(no_log.start_error, "No such file or directory");
  const Job job{{"ccbench-no-such-launcher", "x"}, dir / "exec.log"};
  const JobEnd no_exec = run_job(job, limits);
  EXPECT_TRUE(no_exec.started);
  EXPECT_EQ(no_exec.exit_status, 127);
  EXPECT_NE(read(job.log_file).find("process_test: cannot start ccbench-no-such-launcher: No such file or directory"),
            std::string::npos);
}

TEST_F(LaunchProcess, ConcurrencyAndOrder) {
  limits.deadline_s = 30;
  limits.concurrency = 1;
  std::vector<Job> jobs;
  for (int i = 0; i < 3; ++i) jobs.push_back(sh("exit " + std::to_string(i), "j" + std::to_string(i) + ".log"));
  std::vector<std::pair<std::size_t, int>> ends;
  const std::atomic<int> never{0};
  EXPECT_TRUE(
      run_jobs(jobs, limits, never, [&](std::size_t i, const JobEnd& e) { ends.emplace_back(i, e.exit_status); }));
  EXPECT_EQ(ends, (std::vector<std::pair<std::size_t, int>>{{0, 0}, {1, 1}, {2, 2}}));
}

TEST_F(LaunchProcess, InterruptEndsEveryRunningGroup) {
  limits.deadline_s = 30;
  std::vector<Job> jobs{sh("sleep 30", "a.log"), sh("sleep 30", "b.log")};
  const std::atomic<int> interrupted{SIGINT};
  int ended = 0;
  EXPECT_FALSE(run_jobs(jobs, limits, interrupted, [&](std::size_t, const JobEnd&) { ++ended; }));
  EXPECT_EQ(ended, 0);
}

}  // namespace
}  // namespace ccbench::launch
