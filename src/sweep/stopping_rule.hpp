// When to stop sampling one size (`-n auto`): rank 0 applies this after each round and broadcasts
// the decision, outside the timed region. Pure, so it is unit-tested without MPI.
#pragma once

#include <optional>
#include <span>

#include "core/sampling.hpp"

namespace ccbench {

struct StoppingRule {
  std::optional<int> iters;   // -n N: exactly N samples
  double target_ci = 0.01;    // stop when the 95% CI of the median is within this fraction of it
  double max_time_s = 1.0;    // ... or when this much time went into the size
  int min_samples = kMinSamplesPerSize;
  int max_samples = kMaxSamplesPerSize;
};

struct StopDecision {
  bool stop = false;
  int next_round = 0;     // samples to take before deciding again
  bool ci_met = false;    // the CI target holds for the samples so far
};

// `samples` are the aggregated samples so far (unsorted), `elapsed_s` the time spent on the size
// since sampling began and `sample_cost_s` the wall time one sample took on average (barrier,
// batch, aggregation), used to keep a round within the time left.
StopDecision decide(const StoppingRule& rule, std::span<const double> samples, double elapsed_s, double sample_cost_s);

// Size of the first round.
int first_round(const StoppingRule& rule);

}  // namespace ccbench
