// The frame every measuring command runs in (`run`, `fabric`, `congestion`, `checkpoint`): what a
// command does between `main` and its own flags, in one place. The frame owns
//
//   the signal mask (blocked before MPI starts its threads, which inherit it; the watchdogs
//   receive the signals), MPI init and finalize, the set-up watchdog, agreed errors, and the one
//   ending ladder (sweep/run_ending.hpp) with the result writers it is given,
//
// so a command is its flags and its measuring body: `run(Frame&)`, an entry of the table
// cli/measuring_commands.cpp, which both the dispatcher and the build read. A command hands
// `frame.ending()` to the session or its own loop, and never ends a rank itself. The frame sees
// only the ControlChannel: a test runs several ranks as threads (ThreadChannel) with an Exit that
// ends the thread. docs/architecture.md, "How to add a measuring command".
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "measure/command.hpp"
#include "sweep/channel.hpp"
#include "sweep/run_ending.hpp"

namespace ccbench::measure {

class Frame {
 public:
  // `command` prefixes every message ("ccbench run"); argv[0] is "ccbench <name>".
  Frame(ControlChannel& channel, std::string command, int argc, char** argv,
        RunEnding::Exit exit = &RunEnding::exit_process, std::chrono::milliseconds peer_wait = std::chrono::seconds(2));
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;

  ControlChannel& channel() { return channel_; }
  bool is_root() const { return channel_.is_root(); }
  const std::string& command() const { return ending_.command(); }
  int argc() const { return argc_; }
  char** argv() const { return argv_; }
  RunEnding& ending() { return ending_; }

  // A usage or config error every rank knows (or rank 0's own): rank 0 prints "<command>: message";
  // returns exit 2.
  int usage_error(const std::string& message) const;
  // Collective: every rank passes its error ("" = ok); when any failed, rank 0 prints the combined
  // message and every rank gets exit 2; nullopt when none did.
  std::optional<int> agree_or_usage_error(const std::string& error);

 private:
  ControlChannel& channel_;
  int argc_;
  char** argv_;
  RunEnding ending_;
};

// A measuring command's process: signals blocked, the environment as started kept, MPI started,
// the frame over MPI_COMM_WORLD, the command's run, MPI finalized. Returns main's exit code.
int run_measuring_command(const MeasuringCommand& command, int argc, char** argv);

}  // namespace ccbench::measure
