// What a finished job left (its log and result file) and what kind of failure it was: the host
// could not be reached, the job hung past its deadline, or it crashed with a signal.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "launch/process.hpp"

namespace ccbench::launch {

enum class Failure {
  none,         // exit 0
  unreachable,  // the launcher says it could not reach a host
  hang,         // the deadline passed; the group was ended
  crash,        // a signal ended the launcher
  failed,       // any other non-zero exit
};
std::string_view name(Failure f);

// Checked in this order: hang, unreachable (the log names it), crash, failed, none.
Failure classify(const JobEnd& end, std::string_view log);

// A launcher line that says a host could not be reached (Open MPI through ssh or the emulation's
// agent, Slurm's srun), preferring one that names the host.
std::optional<std::string> unreachable_line(std::string_view log);

// The line of the log that best says what went wrong: the first one naming a cause (ccbench's
// watchdog, a dead peer, a connection the transport could not make), else the last error line.
std::string error_line(std::string_view log);

// The log's text and the result file, when there is one (load_error says why it did not load).
struct Collected {
  std::string log;
  std::optional<ResultFile> result;
  std::string load_error;
};
Collected collect(const std::filesystem::path& log_file, const std::filesystem::path& result_file);

}  // namespace ccbench::launch
