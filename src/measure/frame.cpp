#include "measure/frame.hpp"

#include <cstdio>

#include "core/error.hpp"
#include "sweep/mpi_channel.hpp"
#include "sweep/watchdog.hpp"
#include "system/host_info.hpp"

namespace ccbench::measure {

Frame::Frame(ControlChannel& channel, std::string command, int argc, char** argv, RunEnding::Exit exit,
             std::chrono::milliseconds peer_wait)
    : channel_(channel),
      argc_(argc),
      argv_(argv),
      ending_(std::move(command), channel.rank(), std::move(exit), peer_wait) {}

int Frame::usage_error(const std::string& message) const {
  if (channel_.is_root()) std::fprintf(stderr, "%s: %s\n", command().c_str(), message.c_str());
  return exit_code::usage;
}

std::optional<int> Frame::agree_or_usage_error(const std::string& error) {
  if (auto failed = channel_.agree_on_error(error)) return usage_error(*failed);
  return std::nullopt;
}

int run_measuring_command(const MeasuringCommand& command, int argc, char** argv) {
  if (command.before_mpi != nullptr) {
    if (const auto exit = command.before_mpi(argc, argv)) return *exit;
  }
  Watchdog::block_termination_signals();  // before MPI_Init: MPI's threads inherit the mask
  system::environment_at_startup();       // before a backend sets variables of its own
  int code = exit_code::ok;
  {
    MpiChannel channel = MpiChannel::init_world(argc, argv);
    Frame frame(channel, "ccbench " + std::string(command.name), argc, argv);
    // What a command's set-up throws past its own checks ends through the ladder too (a failed
    // peer: 4, anything else: 2), never std::terminate.
    code = frame.ending().guard([&] { return command.run(frame); }, [] { return std::string("set-up"); });
  }  // every channel and watchdog goes before MPI_Finalize
  return MpiChannel::finalize(code);
}

}  // namespace ccbench::measure
