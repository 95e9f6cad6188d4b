// The commands that measure (or gather over a launcher) live in a second executable,
// ccbench-measure, the only one linked with MPI; `ccbench` itself (compare, report, import, model,
// --help) never loads the MPI library. `ccbench run ...` execs ccbench-measure in place (same
// process id, environment, signals and launcher) with the same arguments. docs/architecture.md
// says why an exec and not a dlopen'd module.
#pragma once

#include <string_view>

namespace ccbench::cli {

struct MeasuringCommand {
  std::string_view name;
  std::string_view summary;
};

inline constexpr MeasuringCommand kMeasuringCommands[] = {
    {"run", "collective sweep (launch with mpirun or srun)"},
    {"fabric", "libfabric latency and bandwidth between 2 ranks (launch with mpirun -np 2)"},
    {"info", "discovered system as JSON (shell or mpirun)"},
    {"congestion", "congestion impact factor: measured tests alone and beside congestor patterns (mpirun)"},
    {"checkpoint", "time to a durable checkpoint on a storage tier, write and read back (mpirun or srun)"},
};

inline constexpr std::string_view kMeasureExecutable = "ccbench-measure";

constexpr std::string_view measuring_summary(std::string_view name) {
  for (const auto& c : kMeasuringCommands) {
    if (c.name == name) return c.summary;
  }
  return {};
}

}  // namespace ccbench::cli
