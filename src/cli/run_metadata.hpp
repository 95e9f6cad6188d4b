// What a result file says about the run: hosts, fabric, software, environment, config.
#pragma once

#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "core/result.hpp"
#include "sweep/channel.hpp"
#include "sweep/plan.hpp"
#include "sweep/run_config.hpp"

namespace ccbench::cli {

// Collective: gathers every rank's host description; the full header is meaningful on rank 0.
ResultFile describe_run(const RunConfig& config, ControlChannel& channel, const Backend& backend,
                        const Plan& plan, int argc, char** argv);

}  // namespace ccbench::cli
