// One row of the measuring commands' table (cli/measuring_commands.cpp): what the dispatcher, the
// `ccbench` executable (names, summaries and flags; it execs ccbench-measure) and the build read.
// Header-only and free of MPI, so the executable without MPI can include it.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

namespace CLI {
class App;
}

namespace ccbench::measure {

class Frame;

struct MeasuringCommand {
  std::string_view name;
  std::string_view summary;
  // The command's flags, declared once (cli/flag_sets/): a CLI11 app with every flag the command
  // parses, bound to values the app owns. The command's parse fills one from argv; `ccbench help`
  // prints one without MPI (so both executables have it, and it is never null).
  std::unique_ptr<CLI::App> (*flags)() = nullptr;
  // Optional: runs before MPI starts, on flags that need no launcher (fabric's provider list,
  // info from a shell); an exit code ends the command there, nullopt goes on to run.
  std::optional<int> (*before_mpi)(int argc, char** argv) = nullptr;
  // The command's body in its frame: flags, set-up, measuring; returns the exit code.
  int (*run)(Frame& frame) = nullptr;
};

}  // namespace ccbench::measure
