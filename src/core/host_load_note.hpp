// The one reading of system.host_load (written by src/system/host_load.cpp) that the run summary,
// `report` and `compare` print: whether the host was busy during a run, in one sentence.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ccbench {

// Thresholds: other processes used at least this share of the ranks' cores, or this much CPU time
// was stolen by the hypervisor, or another process held a GPU open.
inline constexpr double kBusyOthersShare = 0.10;
inline constexpr double kBusyStealShare = 0.05;

// "host busy: other processes used 63% of the ranks' 2 cores (stress-ng 61%); steal 0%; load
// average 1.2 -> 3.9", or nullopt when `system` has no host_load or the host was quiet.
std::optional<std::string> busy_host_note(const nlohmann::json& system);

}  // namespace ccbench
