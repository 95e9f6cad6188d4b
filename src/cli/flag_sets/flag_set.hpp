// A measuring command's flags, declared once (issue 29 item 1): a CLI11 app that owns every value
// its flags are bound to. The row of the command in cli/measuring_commands.cpp exposes a factory of
// it (`flags`), the command's parse fills one from argv and checks the values it holds, and
// `ccbench help COMMAND` prints one: the three read the same declarations. No MPI, so both
// executables link it.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

namespace ccbench::cli {

// The measuring commands' common app settings: a flag given twice takes the last value, and the
// help's flag column is 36 wide.
class FlagSet : public CLI::App {
 public:
  FlagSet(std::string description, std::string name);
};

// `ccbench help --markdown COMMAND`: the flag reference of `app` as a Markdown table, one row per
// flag (its names, its value, its default, its help), in declaration order.
std::string flag_reference_markdown(const CLI::App& app);

}  // namespace ccbench::cli
