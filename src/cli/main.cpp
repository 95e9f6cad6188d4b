// `ccbench <command> ...`: dispatches to the registered subcommands.
#ifdef CCBENCH_MEASURE_EXECUTABLE
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.hpp"
#include "cli/flag_sets/flag_set.hpp"
#include "cli/measuring_commands.hpp"

namespace ccbench::cli {

std::vector<Command>& registry() {
  static std::vector<Command> table;
  return table;
}

bool register_command(const Command& command) {
  registry().push_back(command);
  return true;
}

const std::vector<Command>& commands() { return registry(); }

namespace {
const char* g_program_path = "ccbench";
}

const char* program_path() { return g_program_path; }

}  // namespace ccbench::cli

namespace {

void print_usage(std::FILE* out) {
  std::fprintf(out, "usage: ccbench <command> [options]\n\ncommands:\n");
  auto sorted = ccbench::cli::commands();
  std::ranges::sort(sorted, {}, &ccbench::cli::Command::name);
  for (const auto& c : sorted) {
    std::fprintf(out, "  %-10.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
  }
  std::fprintf(out, "\n`ccbench help <command>` or `ccbench <command> --help` for a command's options;\n");
  std::fprintf(out, "`ccbench help --markdown <command>`: a measuring command's flags as a Markdown table.\n");
}

const ccbench::cli::Command* find_command(std::string_view name) {
  for (const auto& c : ccbench::cli::commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const ccbench::measure::MeasuringCommand* find_measuring_command(std::string_view name) {
  for (const auto& row : ccbench::cli::measuring_commands()) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

// `ccbench help COMMAND [SUBCOMMAND...]` is `ccbench COMMAND [SUBCOMMAND...] --help`: the command's
// own help printer (its flag definitions), so help and the command cannot disagree. A measuring
// command's is printed here from its row's flag set, the one its parse uses (no exec, no MPI);
// `ccbench help --markdown COMMAND` prints that flag set as a Markdown table.
int help(int argc, char** argv) {
  const bool markdown = argc > 2 && std::string_view(argv[2]) == "--markdown";
  const int at = markdown ? 3 : 2;
  if (argc <= at) {
    if (!markdown) {
      print_usage(stdout);
      return 0;
    }
    std::fprintf(stderr, "ccbench help --markdown: name a measuring command\n");
    return 2;
  }
  const auto* command = find_command(argv[at]);
  if (command == nullptr) {
    std::fprintf(stderr, "ccbench help: unknown command '%s'\n\n", argv[at]);
    print_usage(stderr);
    return 2;
  }
  const auto* measuring = find_measuring_command(command->name);
  if (markdown) {
    if (measuring == nullptr || argc > at + 1) {
      std::string names;
      for (const auto& row : ccbench::cli::measuring_commands())
        names += (names.empty() ? "" : ", ") + std::string(row.name);
      std::fprintf(stderr, "ccbench help --markdown: takes one measuring command (%s), not '%s'\n", names.c_str(),
                   argc > at + 1 ? argv[at + 1] : argv[at]);
      return 2;
    }
    std::cout << ccbench::cli::flag_reference_markdown(*measuring->flags());
    return 0;
  }
  if (measuring != nullptr && argc == at + 1) {
    std::cout << measuring->flags()->help();
    return 0;
  }
  std::string program = "ccbench " + std::string(command->name);
  std::string help_flag = "--help";
  std::vector<char*> args{program.data()};
  args.insert(args.end(), argv + 3, argv + argc);
  args.push_back(help_flag.data());
  args.push_back(nullptr);  // argv[argc] == NULL, as for any command
  return command->main(static_cast<int>(args.size()) - 1, args.data());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 0 && argv[0] != nullptr) ccbench::cli::g_program_path = argv[0];
#ifdef CCBENCH_MEASURE_EXECUTABLE
  // `ccbench run` execs ccbench-measure in place; keep the process's name what the user started
  // (ps, top, pkill ccbench, /proc/PID/comm), as argv[0] already is. Threads started later inherit it.
  ::prctl(PR_SET_NAME, "ccbench", 0, 0, 0);
#endif
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "-h" || name == "--help") {
    print_usage(stdout);
    return 0;
  }
  if (name == "help") return help(argc, argv);
  if (name == "--version") {
    std::printf("ccbench %s\n", CCBENCH_VERSION);
    return 0;
  }
  for (const auto& c : ccbench::cli::commands()) {
    if (c.name == name) {
      std::string program = "ccbench " + name;
      std::vector<char*> args(argv + 1, argv + argc);
      args[0] = program.data();
      args.push_back(nullptr);  // argv[argc] == NULL: MPI_Init walks argv to it
      return c.main(static_cast<int>(args.size()) - 1, args.data());
    }
  }
  std::fprintf(stderr, "ccbench: unknown command '%s'\n\n", name.c_str());
  print_usage(stderr);
  return 2;
}
