// How an MPI-launched command (`ccbench run`, `ccbench fabric`) ends when it cannot go on: a hang
// caught by the watchdog, a termination signal, or a failed peer. Shared so both report alike.
#pragma once

#include <string_view>

#include "backends/backend.hpp"
#include "sweep/peer_table.hpp"
#include "sweep/result_writer.hpp"
#include "sweep/watchdog.hpp"

namespace ccbench {

// Saves what finished (rank 0: the result file with status incomplete, interrupted or failed) and
// ends the process with the event's exit code, or 4 when rank 0 finds a peer on its host gone.
// Runs on the watchdog thread or the main thread; never returns.
[[noreturn]] void end_run(std::string_view command, const Watchdog::Event& event, int rank, ResultWriter* writer,
                          const PeerTable& peers, Backend* backend);

}  // namespace ccbench
