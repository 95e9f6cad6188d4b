// Runs another program by its argument vector (posix_spawnp: no shell, so a path holding quotes,
// `$(...)` or `;` reaches the program as one literal argument) and captures its standard output,
// under a deadline so a stuck program (`lfs` on a hung Lustre mount) cannot hang the caller.
// ccbench never builds a shell command line (tests/unit/layers/check_no_shell.py checks src/).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace ccbench {

struct ProgramRun {
  bool started = false;    // false: not found on PATH or not executable (`error` says why)
  bool timed_out = false;  // the deadline passed: the program (and its process group) was killed
  int exit_code = -1;      // its exit status when it exited; -1 when killed by a signal or not started
  std::string output;      // its standard output (and standard error, when asked), at most max_output_bytes
  std::string error;       // why it did not start, e.g. "lfs: No such file or directory"
  bool ok() const { return started && !timed_out && exit_code == 0; }
};

struct ProgramOptions {
  std::chrono::milliseconds deadline{5000};
  bool capture_stderr = false;  // false: the program's stderr goes to /dev/null
  std::size_t max_output_bytes = 1 << 20;
};

// argv[0] is looked up on PATH as execvp does. Standard input is /dev/null. Never throws for the
// program's own failures (they are in the result); throws std::invalid_argument for an empty argv.
ProgramRun run_program(const std::vector<std::string>& argv, const ProgramOptions& options = {});

// Whether `program` is an executable file in one of PATH's folders (or, with a '/', at that path).
bool program_on_path(const std::string& program);

}  // namespace ccbench
