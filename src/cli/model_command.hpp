// `ccbench model <subcommand>`: fit and predict live in model_command.cpp; other subcommands
// (plan) register themselves here from their own file, like the top-level commands.
#pragma once

#include <string_view>
#include <vector>

namespace ccbench::cli {

struct ModelSubcommand {
  std::string_view name;
  std::string_view summary;
  int (*main)(int argc, char** argv);  // argv[0] = "ccbench model <name>"
};

bool register_model_subcommand(const ModelSubcommand& sub);
const std::vector<ModelSubcommand>& model_subcommands();

}  // namespace ccbench::cli
