// `ccbench model <subcommand>`: fit lives in model_command.cpp (with the dispatcher); predict, plan and
// checkpoint register themselves here from their own files, like the top-level commands.
#pragma once

#include <functional>
#include <string>
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

// `ccbench model predict MODEL... --trace TRACE.json` (model_predict_trace.cpp): the flags predict
// parsed, for a trace.
struct TracePredictFlags {
  std::vector<std::string> models;
  std::string trace, profiles, migrate, format;
  int ranks_per_node = 0;  // 0: the models' one fitted layout
};
int predict_trace(const TracePredictFlags& flags);

// "1.23 ms": a time in the unit that suits it.
std::string format_time(double us);

}  // namespace ccbench::cli
