// What one `ccbench screen` is asked to do (its flags, parsed by cli/screen_command.cpp), and the
// checks made before anything runs or is created: the values a test's `ccbench run` could not
// carry, output paths, the launcher (docs/screen.md).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "screen/outputs.hpp"
#include "screen/screen_test.hpp"
#include "screen/search.hpp"

namespace ccbench::screen {

struct ScreenConfig : ScreenTestConfig {
  std::vector<std::string> hosts;
  std::string hosts_source;  // --hosts, --hostfile FILE or SLURM_JOB_NODELIST
  std::string launcher_name = "mpirun";
  std::string judge = "both";  // busbw | latency | both
  int concurrency = 0;
  Criteria criteria;
  std::filesystem::path out;
  std::filesystem::path healthy_out;
  std::filesystem::path exclude_out;
  std::string unjudged_name = "exclude";  // --unjudged
  UnjudgedHosts unjudged = UnjudgedHosts::exclude;
};

// Throws UsageError naming the flag: a size a one-host or a pair test would not carry whole (the
// sizes as given: small_text, large_text), --healthy-out and --exclude-out the same file or not
// writable, --out existing, the launcher not on PATH, srun ranks that do not fit the allocation.
void check_screen_config(const ScreenConfig& c, std::string_view small_text, std::string_view large_text);

}  // namespace ccbench::screen
