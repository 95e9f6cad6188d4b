// `ccbench run`: MPI-launched collective sweep. Parses the flags, then hands the run session
// (sweep/session.hpp) the collective backend from the registry and the run's header; the session
// does the rest. None of the measuring happens here.
#include "backends/backend.hpp"
#include "cli/command.hpp"
#include "cli/measuring_commands.hpp"
#include "cli/run_options.hpp"
#include "core/deadlines.hpp"
#include "core/error.hpp"
#include "sweep/describe_run.hpp"
#include "sweep/mpi_channel.hpp"
#include "sweep/session.hpp"
#include "sweep/watchdog.hpp"
#include "system/host_info.hpp"

namespace ccbench::cli {
namespace {

int run_main(int argc, char** argv) {
  Watchdog::block_termination_signals();  // before MPI_Init: MPI's threads inherit the mask
  system::environment_at_startup();       // before the backend sets variables of its own
  MpiChannel channel = MpiChannel::init_world(argc, argv);

  RunConfig config;
  SessionHooks hooks;
  hooks.command = "ccbench run";
  RunSession session(channel, config, hooks);  // reads `config` when run
  try {
    if (!parse_run_options(argc, argv, config, channel.is_root())) return MpiChannel::finalize(exit_code::ok);
  } catch (const UsageError& e) {
    return MpiChannel::finalize(session.usage_error(e.what()));
  }

  hooks.make_backend = [&config](ControlChannel& ch) {
    BackendOptions options;
    options.path = config.nccl_path;
    options.graph_launches = config.graph_launches;
    options.local_rank = ch.local_rank();
    options.local_size = ch.local_size();
    options.channel = &ch;
    options.setup_watchdog_s = setup_watchdog_s(config.timeout_s, kSetupTimeoutFloorS);
    // --groups: the backend's communicator is this rank's group (the session checked the layout).
    if (config.groups.kind != groups::Kind::none)
      options.group_color = groups::make_layout(config.groups, ch.size()).group_of(ch.rank());
    return make_backend(config.backend, options);
  };
  hooks.describe = [&config, argc, argv](ControlChannel& ch, const Backend& backend, const Plan& plan) {
    return describe_run(config, ch, backend, plan, recorded_command("ccbench run", argc, argv));
  };
  return MpiChannel::finalize(RunSession(channel, config, std::move(hooks)).run());
}

const bool registered = register_command({"run", measuring_summary("run"), &run_main});

}  // namespace
}  // namespace ccbench::cli
