// `ccbench run`: MPI-launched collective sweep. Parses the flags, then hands the run session
// (sweep/session.hpp) the collective backend from the registry and the run's header; the session
// does the rest. None of the measuring happens here.
#include <cstdio>
#include <memory>

#include "backends/backend.hpp"
#include "cli/measuring_commands.hpp"
#include "cli/run_expect.hpp"
#include "cli/run_options.hpp"
#include "core/deadlines.hpp"
#include "core/error.hpp"
#include "measure/frame.hpp"
#include "sweep/describe_run.hpp"
#include "sweep/session.hpp"

namespace ccbench::cli {

int run_entry(measure::Frame& frame) {
  ControlChannel& channel = frame.channel();
  RunConfig config;
  ExpectFlags expect;
  try {
    if (!parse_run_options(frame.argc(), frame.argv(), config, channel.is_root(), &expect)) return exit_code::ok;
  } catch (const UsageError& e) {
    return frame.usage_error(e.what());
  }

  SessionHooks hooks;
  hooks.make_backend = [&config](ControlChannel& ch) {
    BackendOptions options;
    options.path = config.nccl_path;
    options.graph_launches = config.graph_launches;
    options.registration = config.registration;
    options.local_rank = ch.local_rank();
    options.local_size = ch.local_size();
    options.channel = &ch;
    options.setup_watchdog_s = setup_watchdog_s(config.timeout_s, kSetupTimeoutFloorS);
    // --groups: the backend's communicator is this rank's group (the session checked the layout).
    if (config.groups.kind != groups::Kind::none)
      options.group_color = groups::make_layout(config.groups, ch.size()).group_of(ch.rank());
    return make_backend(config.backend, options);
  };
  hooks.describe = [&config, &frame](ControlChannel& ch, const Backend& backend, const Plan& plan) {
    return describe_run(config, ch, backend, plan, recorded_command("ccbench run", frame.argc(), frame.argv()));
  };
  // --expect: every row judged against the model's band as it is measured (cli/run_expect).
  auto tally = std::make_shared<ExpectTally>();
  if (!expect.model_path.empty()) {
    hooks.adjust_header = [&expect](ResultFile& header, const Backend&) {
      header.config["expect"] = {
          {"model", expect.model_path}, {"band", expect.band}, {"stop_below", expect.stop_below}};
    };
    hooks.make_check = [&expect, tally](ControlChannel& ch, const ResultFile& header) {
      return make_expect_check(ch, header, expect, tally);
    };
  }
  const int exit = RunSession(channel, config, std::move(hooks), frame.ending()).run();
  if (!expect.model_path.empty() && channel.is_root() &&
      tally->normal + tally->below + tally->above + tally->not_covered > 0) {
    std::fputs(expect_summary(*tally).c_str(), stdout);
    std::fflush(stdout);
  }
  return exit;
}

}  // namespace ccbench::cli
