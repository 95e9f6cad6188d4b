// The table of the measuring commands (measuring_commands.hpp). Compiled into both executables,
// with the flag sets (cli/flag_sets/): in ccbench the entries are absent (each name execs ccbench-measure,
// measuring_stubs.cpp), in ccbench-measure each name runs its entry in the frame. src/cli/CMakeLists.txt reads the
// names from the rows below (one row a line, `{"name", ...`): keep that shape.
#include "cli/measuring_commands.hpp"

#include <iterator>
#include <utility>

#include "cli/command.hpp"
#include "cli/flag_sets/checkpoint.hpp"
#include "cli/flag_sets/congestion.hpp"
#include "cli/flag_sets/fabric.hpp"
#include "cli/flag_sets/info.hpp"
#include "cli/flag_sets/replay.hpp"
#include "cli/flag_sets/run.hpp"
#ifdef CCBENCH_MEASURE_EXECUTABLE
#include "measure/frame.hpp"
#endif

namespace ccbench::cli {
namespace {

#ifdef CCBENCH_MEASURE_EXECUTABLE
#define CCBENCH_ENTRY(function) &function
#else
#define CCBENCH_ENTRY(function) nullptr
#endif

// info runs whole before MPI: it starts MPI itself only under a launcher. Each row's flags are its
// flag set (cli/flag_sets/NAME.hpp), in both executables. The build reads the rows' first lines.
// clang-format off
constexpr measure::MeasuringCommand kMeasuringCommands[] = {
    {"run", "collective sweep (launch with mpirun or srun)", &run_flags, nullptr, CCBENCH_ENTRY(run_entry)},
    {"fabric", "libfabric latency and bandwidth between 2 ranks (launch with mpirun -np 2)", &fabric_flags,
     CCBENCH_ENTRY(fabric_before_mpi), CCBENCH_ENTRY(fabric_entry)},
    {"info", "discovered system as JSON (shell or mpirun)", &info_flags, CCBENCH_ENTRY(info_before_mpi), nullptr},
    {"congestion", "congestion impact factor: measured tests alone and beside congestor patterns (mpirun)",
     &congestion_flags, nullptr, CCBENCH_ENTRY(congestion_entry)},
    {"checkpoint", "time to a durable checkpoint on a storage tier, write and read back (mpirun or srun)",
     &checkpoint_flags, nullptr, CCBENCH_ENTRY(checkpoint_entry)},
    {"replay", "a traced job's collectives replayed rank by rank: step time and each call site's share (mpirun or srun)",
     &replay_flags, nullptr, CCBENCH_ENTRY(replay_entry)},
};
// clang-format on

#ifdef CCBENCH_MEASURE_EXECUTABLE
// The dispatcher's table (cli/command.hpp) takes plain functions: one per row.
template <std::size_t I>
int run_in_frame(int argc, char** argv) {
  return measure::run_measuring_command(kMeasuringCommands[I], argc, argv);
}

template <std::size_t... I>
bool register_all(std::index_sequence<I...>) {
  (register_command({kMeasuringCommands[I].name, kMeasuringCommands[I].summary, &run_in_frame<I>}), ...);
  return true;
}

const bool registered = register_all(std::make_index_sequence<std::size(kMeasuringCommands)>{});
#endif

}  // namespace

std::span<const measure::MeasuringCommand> measuring_commands() { return kMeasuringCommands; }

}  // namespace ccbench::cli
