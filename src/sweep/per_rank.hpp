// Per-rank timing (`ccbench run --per-rank`, docs/screen.md "Per-rank timing"): each rank's own
// median op time and how often it was the last to arrive at the collective, so a straggler (a slow
// CPU or GPU) is named by rank and host. Written to a result row as the optional field
//   "per_rank": {"hosts": [..], "median_us": [..], "last_arrivals": [..]}   (index = rank)
// Additive to schema_version 1. Pure functions here; the engine gathers (one string per rank).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ccbench::per_rank {

// One rank's view of one case: its own op time of every sample and how long it waited in the
// barrier before each (the last to arrive waits least).
struct RankTiming {
  std::string host;
  std::vector<double> samples_us;
  std::vector<double> barrier_wait_us;
};

std::string local_host();  // gethostname(2)
std::string encode(const RankTiming& timing);
RankTiming decode(const std::string& text);  // throws std::invalid_argument on a malformed text

// The row field from every rank's timing (index = rank). A sample's last arrival is the rank that
// waited least in the barrier before it (ties: the lowest rank).
nlohmann::json summarize(const std::vector<RankTiming>& ranks);

}  // namespace ccbench::per_rank
