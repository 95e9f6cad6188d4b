// One test of `ccbench screen` (docs/screen.md): the launcher command that runs `ccbench run` on
// the test's hosts, and its measurement from what the run left (exit, log, result file). The
// search that asks for tests and blames hosts is screen/search.hpp; starting and ending the jobs
// is launch/ (below screen/); the command is cli/.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "launch/command_line.hpp"
#include "launch/process.hpp"
#include "screen/search.hpp"

namespace ccbench::screen {

// What every test of a screen runs (the screen's flags of the same names).
struct ScreenTestConfig {
  launch::Launcher launcher = launch::Launcher::mpirun;
  int ranks_per_host = 1;
  std::vector<std::string> launcher_args;
  std::string ccbench;  // the binary the launcher starts
  std::string backend = "mpi";
  std::string path;  // nccl only
  std::string op = "allreduce";
  std::uint64_t small_bytes = 8;
  std::uint64_t large_bytes = 4ull << 20;
  std::string iters = "10";
  int warmup = 2;
  double timeout_s = 30;
  double max_time_per_size_s = 2;
  double test_timeout_s = 0;  // the screen's deadline for one test (0: 2 * timeout + 60)
  std::vector<std::string> run_args;
  bool per_rank = true;  // every test runs with --per-rank (stragglers by rank and host)
};

struct ScreenTest {
  TestSpec spec;
  launch::Job job;                    // argv and log file
  std::filesystem::path result_file;  // absolute
  launch::JobEnd end;
  Measurement measurement;
  nlohmann::json straggler;  // the large size's last arrival most often, from the row's per_rank
};

// NNN-STAGE-HOST-HOST, or NNN-STAGE-hostI-hostJ when the names would make it long.
std::string test_stem(const TestSpec& t, const std::vector<std::string>& names);

// The test's job, its files in `dir` named by its stem.
ScreenTest make_screen_test(const ScreenTestConfig& c, const TestSpec& spec, const std::vector<std::string>& names,
                            const std::filesystem::path& dir);

// The launcher command: `ccbench run` of the op at the two sizes on the hosts.
std::vector<std::string> screen_test_argv(const ScreenTestConfig& c, const std::vector<std::string>& hosts,
                                          const std::filesystem::path& result_file, const std::string& label);

// Sets t.measurement (and t.straggler) from t.end, the log and the result file.
void judge_screen_test(ScreenTest& t, const ScreenTestConfig& c);

}  // namespace ccbench::screen
