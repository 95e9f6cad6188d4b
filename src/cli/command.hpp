// Subcommands register themselves in one table (nvbandwidth style): a new command is one new file.
#pragma once

#include <string_view>
#include <vector>

namespace ccbench::cli {

struct Command {
  std::string_view name;
  std::string_view summary;
  // Receives argv with argv[0] = "ccbench <name>"; returns the process exit code (README.md, "Exit
  // codes").
  int (*main)(int argc, char** argv);
};

bool register_command(const Command& command);
const std::vector<Command>& commands();
// argv[0] of the process as started (the path of ccbench), before main rewrote it.
const char* program_path();

}  // namespace ccbench::cli
