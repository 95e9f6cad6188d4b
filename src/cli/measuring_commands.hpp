// The commands that measure (or gather over a launcher) live in a second executable,
// ccbench-measure, the only one linked with MPI; `ccbench` itself (compare, report, import, model,
// --help) never loads the MPI library. `ccbench run ...` execs ccbench-measure in place (same
// process id, environment, signals and launcher) with the same arguments. docs/architecture.md
// says why an exec and not a dlopen'd module.
//
// The one list of them is the table in measuring_commands.cpp: ccbench reads its names and
// summaries (and execs), ccbench-measure dispatches through it into the frame (measure/frame.hpp),
// and the build reads its names (each NAME_*.cpp is compiled into ccbench-measure only).
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "measure/command.hpp"

namespace ccbench::cli {

std::span<const measure::MeasuringCommand> measuring_commands();

inline constexpr std::string_view kMeasureExecutable = "ccbench-measure";

// The entries, each in its NAME_command.cpp (built into ccbench-measure only).
int run_entry(measure::Frame& frame);
int fabric_entry(measure::Frame& frame);
std::optional<int> fabric_before_mpi(int argc, char** argv);
std::optional<int> info_before_mpi(int argc, char** argv);
int congestion_entry(measure::Frame& frame);
int checkpoint_entry(measure::Frame& frame);
int replay_entry(measure::Frame& frame);

}  // namespace ccbench::cli
