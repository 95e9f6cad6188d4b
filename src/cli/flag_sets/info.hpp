// `ccbench info`'s flags (docs/info.md), declared once: the row's flag set and info's parse
// (cli/info_command.cpp). Not a FlagSet: info keeps CLI11's own settings (its help unchanged).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

namespace ccbench::cli {

struct InfoFlags : CLI::App {
  InfoFlags();

  std::string instance_type;
  std::string out;
};

std::unique_ptr<CLI::App> info_flags();

}  // namespace ccbench::cli
