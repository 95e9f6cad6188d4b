// `ccbench replay --log-calls PREFIX` (docs/replay.md, "The call log"): each rank's own record of
// the calls it issued, so what a replay sent can be checked against the trace it was given. The
// loop only counts each call as it returns (outside the timed call); the log is built and
// written once, after the last trial.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "replay/plan.hpp"

namespace ccbench::replay {

// PREFIX.rankR.json: one file per job rank, written by that rank.
std::string call_log_path(const std::string& prefix, int world_rank);

// The log of `world_rank`: `issued[i]` is how many times the rank's i-th planned call returned
// from the backend, `passes` the passes over its sequence it began (the unrecorded warm-up step
// included).
nlohmann::json call_log(const ReplayPlan& plan, int world_rank, const std::vector<std::uint64_t>& issued,
                        std::uint64_t passes);

}  // namespace ccbench::replay
