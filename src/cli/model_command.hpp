// `ccbench model <subcommand>`: fit and predict live in model_command.cpp; other subcommands
// (plan) register themselves here from their own file, like the top-level commands.
#pragma once

#include <functional>
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

// Runs a subcommand's body: a ParseError or UsageError becomes one line "PROGRAM: message", any
// other exception "PROGRAM: error: message", each exit 2 (the model commands fail alike).
int run_reporting_errors(const char* program, const std::function<int()>& body);

}  // namespace ccbench::cli
