// The flags every measuring command shares (`ccbench run`, `ccbench fabric`, and the commands built
// on the run session): sizes, sampling, trials, check, output, watchdog, labels. One definition, so
// they mean the same, parse the same and fail with the same message everywhere.
#pragma once

#include <string>
#include <string_view>

#include "sweep/run_config.hpp"
#include "sweep/run_flags.hpp"

namespace CLI {
class App;
}

namespace ccbench {

// Flag text kept as typed until every flag is parsed (sizes with K/M/G, "auto", "1%").
struct SharedFlagText {
  std::string min_bytes = "8";
  std::string max_bytes = "64M";
  std::string step_bytes = "0";
  std::string step_factor = "2";
  std::string iters = "auto";
  std::string target_ci = "0.01";
  std::string check = "1";
  std::string timeout = "300";
  std::string max_time_per_size = "1";
  std::string require_path;  // "" = none
};

// Adds the shared flags to `app`, bound to `config` (values parsed by CLI11) and `text` (values
// checked by apply_shared_flags). `unit` names what is measured in the help ("collective",
// "operation"); the defaults of `text` are shown as the flags' defaults.
void add_shared_flags(CLI::App& app, RunConfig& config, SharedFlagText& text, std::string_view unit);

// After parsing: converts and checks the shared flags into `config`. Throws UsageError naming the
// flag (every number finite and in range; sizes whose buffers overflow are caught by the session).
void apply_shared_flags(RunConfig& config, const SharedFlagText& text);

}  // namespace ccbench
