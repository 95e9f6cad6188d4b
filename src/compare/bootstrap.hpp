// Bootstrap over whole trials for the across-size statistics (geometric mean and max of the
// per-size ratios). A trial is one pass over the whole plan, so a replicate draws trials with
// replacement on each side and keeps every size of a drawn trial together: the correlation between
// sizes within a trial (a slow node, a noisy launch) stays in the replicates.
#pragma once

#include <cstdint>
#include <vector>

namespace ccbench::compare {

// Per size, the log of each trial's median time, indexed by the side's dense trial id (NaN where a
// trial has no row at that size).
struct TrialTable {
  int baseline_trials = 0;
  int candidate_trials = 0;
  std::vector<std::vector<double>> baseline_log;  // [size][trial]
  std::vector<std::vector<double>> candidate_log;
};

// Hodges-Lehmann log ratio log(time_base / time_cand) of one size over the given trial draws
// (indices into the trial ids, repeats allowed); NaN when no drawn trial has data at that size.
double trial_log_ratio(const TrialTable& t, std::size_t size, const std::vector<int>& base_draw,
                       const std::vector<int>& cand_draw, std::vector<double>& scratch);

struct TrialEstimates {
  std::vector<double> size_log_ratio;  // point estimate per size (all trials once)
  double geomean_log = 0;              // mean of size_log_ratio
  double max_log = 0;                  // max of size_log_ratio
  std::size_t argmax = 0;
  std::vector<double> geomean_replicates;  // log geomean per replicate
  std::vector<double> max_replicates;      // log max per replicate
};

// Point estimates and `resamples` replicates. Replicate r uses a generator seeded from (seed, r), so
// the result does not depend on how many threads ran it.
TrialEstimates bootstrap_trials(const TrialTable& table, int resamples, std::uint64_t seed);

}  // namespace ccbench::compare
