// Every rank's hostname on every rank, for commands that place work by host (congestion's layout,
// checkpoint's writers and node-local leaders).
#pragma once

#include <string>
#include <vector>

#include "sweep/channel.hpp"

namespace ccbench {

// Collective: gethostname(2) of each rank, in rank order, on every rank.
std::vector<std::string> every_rank_hostname(ControlChannel& channel);

}  // namespace ccbench
