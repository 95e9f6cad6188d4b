// The order of the phases of `ccbench congestion` (docs/congestion.md, docs/method.md "Congestion
// impact factor"): every trial measures each pattern as a pair of adjacent phases, isolated and
// congested, and the order inside the pair alternates from trial to trial (I C, then C I), so a
// drift of the machine that is linear in time adds as much to the isolated phases as to the
// congested ones over two trials and cannot pass for congestion.
#pragma once

#include <string>
#include <vector>

namespace ccbench::congestion {

struct PhaseSpec {
  int trial = 0;
  int pattern = 0;  // index into the run's patterns
  bool congested = false;
};

// trials x patterns pairs, 2 * trials * patterns phases in run order.
std::vector<PhaseSpec> phase_plan(int trials, int patterns);

// "isolated" or "congested".
std::string phase_name(bool congested);

}  // namespace ccbench::congestion
