// The run of one `ccbench screen` (docs/screen.md): the search's rounds, each round's tests as
// launcher jobs (at most --concurrency at once, each ended at its deadline, all ended on a
// signal), every test judged and recorded into the search, then screen.json and the host lists.
// The clock and the processes come in (launch::JobRuntime) and so does the interruption, so the
// whole run is unit-tested in one process with a fake launcher; the command
// (cli/screen_command.cpp) parses the flags, installs the signal handlers and prints.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "launch/process.hpp"
#include "screen/screen_config.hpp"
#include "screen/screen_file.hpp"
#include "screen/screen_test.hpp"
#include "screen/search.hpp"

namespace ccbench::screen {

constexpr int kScreenExitSomeBad = 1;      // a host not shown healthy
constexpr int kScreenExitCouldNotRun = 3;  // no test started a rank, or an output could not be written

// What the command prints as the screen goes.
struct ScreenPrinter {
  std::function<void()> started;                                  // --out made, before the first test
  std::function<void(const ScreenTest&)> test_ended;              // a test whose launcher started has ended
  std::function<void(const Search&, double elapsed_s)> finished;  // every test done, before the files
  std::function<void(const std::filesystem::path&)> screen_file;  // after the files
  std::function<void(const std::string&)> error;                  // one line, without "ccbench screen: "
};

// Runs the screen; c is checked (check_screen_config) and c.ccbench set. Returns the exit code:
// 0 every host healthy, 1 some not, 2 every test's `ccbench run` refused its arguments, 3 the
// screen could not run, 128 + N when `interrupt` became N (the running tests ended, no
// screen.json). provenance.command and tool_version are the caller's; the rest is set here.
int run_screen(const ScreenConfig& c, ScreenProvenance provenance, const std::atomic<int>& interrupt,
               const ScreenPrinter& printer, launch::JobRuntime runtime = launch::system_job_runtime());

}  // namespace ccbench::screen
