// What a result file says about the run: hosts, fabric, software, environment, config. Every
// measuring command's header starts here (run and fabric through the session's describe hook,
// congestion from its phase loop).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "core/result.hpp"
#include "sweep/channel.hpp"
#include "sweep/plan.hpp"
#include "sweep/run_config.hpp"

namespace ccbench {

// The command line a result file records: argv with argv[0] replaced by the command that ran it
// ("ccbench run"), not the executable's path.
std::vector<std::string> recorded_command(std::string_view command, int argc, char** argv);

// Collective: gathers every rank's host description; the full header is meaningful on rank 0.
ResultFile describe_run(const RunConfig& config, ControlChannel& channel, const Backend& backend, const Plan& plan,
                        const std::vector<std::string>& command);

}  // namespace ccbench
