// The screen's search at scale, against simulated hosts (docs/screen.md, "Simulation"): the same
// Search the command runs, answered by a model instead of mpirun. Used by benchmarks/screen (the
// table in docs/screen.md) and tests/unit/screen.
#pragma once

#include <cstdint>

#include "screen/search.hpp"

namespace ccbench::screen {

struct SimulationConfig {
  int hosts = 8;
  int slow_hosts = 0;      // links at `slowdown` of the others' busbw
  double slowdown = 0.55;  // a slow host's busbw / a healthy one's
  int failed_hosts = 0;    // hang any test they are in (the watchdog ends it)
  // Per-test noise, log-normal with these coefficients of variation (0: none).
  double busbw_cv = 0.0;
  double latency_cv = 0.0;
  double busbw_gbps = 40.0;  // a healthy pair's busbw
  double latency_us = 30.0;  // a healthy pair's small-message time
  double solo_busbw_gbps = 300.0;
  double solo_latency_us = 10.0;
  // Test time model: launch_s + per_host_s * hosts in the test + measure_s; a failed test lasts
  // launch_s + watchdog_s instead of measure_s.
  double launch_s = 2.0;
  double per_host_s = 0.05;
  double measure_s = 4.0;
  double watchdog_s = 30.0;
  int concurrency = 0;
  std::uint64_t seed = 1;
  Criteria criteria;
};

struct SimulationResult {
  int rounds = 0;
  int tests = 0;
  double wall_s = 0;     // sum over rounds of the round's longest test
  int bad = 0;           // slow + failed hosts planted
  int missed = 0;        // bad hosts not blamed (judged healthy, or unjudged)
  int false_blamed = 0;  // healthy hosts blamed (slow, failed or unreachable)
  int unjudged = 0;      // hosts, bad or not, neither shown healthy nor blamed on some metric
};

SimulationResult simulate(const SimulationConfig& config);

}  // namespace ccbench::screen
