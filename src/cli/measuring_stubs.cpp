// In `ccbench` (the executable without MPI): the measuring commands, each of which replaces this
// process with ccbench-measure (execv: same pid, environment and signal disposition, so mpirun,
// srun and the watchdog see no difference).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/measuring_commands.hpp"

namespace ccbench::cli {
namespace {

// ccbench-measure beside this executable (build/ or the install's bin/); CCBENCH_MEASURE overrides.
std::string measure_path() {
  if (const char* forced = std::getenv("CCBENCH_MEASURE"); forced != nullptr && *forced != '\0') return forced;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::string(kMeasureExecutable);
  return (self.parent_path() / kMeasureExecutable).string();
}

int exec_measure(int argc, char** argv) {
  // argv[0] is "ccbench <name>".
  const std::string program = argv[0];
  const std::string name = program.substr(program.find(' ') + 1);
  std::string path = measure_path();
  // argv[0] stays what the user ran (ps, /proc/PID/cmdline and launchers still see `ccbench run`).
  std::string argv0 = program_path();
  std::vector<char*> args;
  args.push_back(argv0.data());
  std::string name_arg = name;
  args.push_back(name_arg.data());
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execv(path.c_str(), args.data());
  std::fprintf(stderr, "%s: cannot start %s: %s (it is built beside ccbench; CCBENCH_MEASURE names another)\n",
               program.c_str(), path.c_str(), std::strerror(errno));
  return 2;
}

const bool registered = [] {
  for (const auto& c : measuring_commands()) register_command({c.name, c.summary, &exec_measure});
  return true;
}();

}  // namespace
}  // namespace ccbench::cli
