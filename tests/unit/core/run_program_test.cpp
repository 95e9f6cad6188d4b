// core/run_program: a program run by argv (no shell), its output captured, under a deadline.
#include "core/run_program.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

namespace ccbench {
namespace {

namespace fs = std::filesystem;

TEST(RunProgram, ArgumentsReachTheProgramLiterally) {
  // The shell would expand $(...), split on spaces and end the quote; printf gets them as they are.
  const std::string hostile = "q'$(touch PWNED)'x; rm -rf /nonexistent \"two words\"";
  const fs::path cwd = fs::current_path();
  const fs::path dir = fs::temp_directory_path() / ("ccbench-run-program-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::current_path(dir);
  const ProgramRun r = run_program({"printf", "[%s]\\n", hostile, "second"});
  fs::current_path(cwd);
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.output, "[" + hostile + "]\n[second]\n");
  EXPECT_FALSE(fs::exists(dir / "PWNED"));
  fs::remove_all(dir);
}

TEST(RunProgram, ExitCodeAndStderr) {
  const ProgramRun quiet = run_program({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_TRUE(quiet.started);
  EXPECT_FALSE(quiet.timed_out);
  EXPECT_EQ(quiet.exit_code, 3);
  EXPECT_FALSE(quiet.ok());
  EXPECT_EQ(quiet.output, "out\n");  // stderr went to /dev/null
  ProgramOptions both;
  both.capture_stderr = true;
  EXPECT_EQ(run_program({"sh", "-c", "echo out; echo err >&2"}, both).output, "out\nerr\n");
}

TEST(RunProgram, MissingProgramIsNotStarted) {
  const ProgramRun r = run_program({"ccbench-no-such-program-xyz", "a"});
  EXPECT_FALSE(r.started);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error, "ccbench-no-such-program-xyz: No such file or directory");
  EXPECT_FALSE(program_on_path("ccbench-no-such-program-xyz"));
  EXPECT_TRUE(program_on_path("sh"));
  EXPECT_THROW(run_program({}), std::invalid_argument);
}

TEST(RunProgram, DeadlineKillsAStuckProgramAndWhatItStarted) {
  // A child that never ends, and a grandchild holding the output pipe open: both are killed (the
  // process group), and the call returns at the deadline instead of after 60 s. 3 s: time for the
  // shell to start and print on a loaded machine.
  ProgramOptions opt;
  opt.deadline = std::chrono::milliseconds(3000);
  const auto start = std::chrono::steady_clock::now();
  const ProgramRun r = run_program({"sh", "-c", "echo started; sleep 60 & sleep 60"}, opt);
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.output, "started\n");
  EXPECT_LT(took_s, 40.0);  // a bound far from the deadline (60 s without it), not a timing band
}

TEST(RunProgram, OutputIsBounded) {
  ProgramOptions opt;
  opt.max_output_bytes = 10;
  const ProgramRun r = run_program({"sh", "-c", "yes | head -c 100000"}, opt);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.output.size(), 10u);
}

}  // namespace
}  // namespace ccbench
