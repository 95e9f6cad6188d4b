// Calibration harness for compare's verdicts: a generator of result sides with the noise of real
// launches (per-sample log-normal noise, a per-launch random effect, outliers, drift from launch to
// launch) and a driver that runs the regression gate and claims over many independent pairs and
// counts verdicts, coverage and false alarms. In process against the compare library (no files),
// so thousands of comparisons take seconds; one check (tests/unit/calibration/test_calibration.cpp)
// confirms through the real loader that one file with N trials and N files of one trial agree.
// The CI test asserts binomial bounds on small runs; benchmarks/calibration prints the tables of
// docs/compare.md from long runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compare/compare.hpp"
#include "core/result.hpp"

namespace ccbench::calibration {

// The noise model of one side. Time at (op, size) in launch l and sample s:
//   t = base(op, size) / ratio(op, size) * exp(launch_sigma * e_l,size + drift * (l + launch_offset))
//       * exp(sample_sigma * z_s) [* U(1.5, 3) with probability outlier_rate]
// where e_l,size = sqrt(rho) u_l + sqrt(1 - rho) v_l,size: a share rho of the launch effect is common
// to every size of the launch (placement), the rest differs by size.
struct NoiseModel {
  std::vector<std::string> ops = {"allreduce", "allgather", "alltoall"};
  std::vector<std::uint64_t> sizes = {1u << 20, 4u << 20, 16u << 20, 64u << 20, 256u << 20, 1u << 30};
  int trials = 5;
  int samples = 20;
  double sample_sigma = 0.02;
  double launch_sigma = 0.01;
  double launch_common = 0.5;  // rho; 1: a launch moves every size together
  double outlier_rate = 0.01;
  double drift_per_launch = 0;  // log time per launch
  int launch_offset = 0;        // the candidate's first launch index when launched after the baseline
  // True speedup ratio time_base / time_cand at (op, size index); 1 on the baseline.
  std::function<double(const std::string&, std::size_t)> ratio = [](const std::string&, std::size_t) { return 1.0; };
  bool one_file_per_trial = false;  // N files of one trial, as repeated launches leave them
  // Levels (percent) each row carries in percentiles_us, as `run --percentiles` writes them (batch 1),
  // so `compare --statistic pNN` can be calibrated; empty: none.
  std::vector<double> percentiles;
};

// A side of `m.trials` launches drawn with `seed` (deterministic).
compare::Side make_side(const std::string& name, const NoiseModel& m, std::uint64_t seed);
std::vector<ResultFile> make_files(const NoiseModel& m, std::uint64_t seed);

// 16M..1G (10 sizes) x 3 ops = 30 rows, the shipped "up to" claim's scope.
std::vector<std::uint64_t> claim_sizes();

struct Counts {
  int runs = 0;
  int regression = 0, pass = 0, inconclusive = 0, confirmed = 0, refuted = 0;
  int covered95 = 0, covered90 = 0, with_ci = 0;  // of the statistic's interval
  int p_below_05 = 0;                             // geomean p-value < 0.05
  int drift_flagged = 0;                          // a drift was detected (common or a side's)
  int drift_changed = 0;                          // ... and it turned a decisive verdict inconclusive
  int decisive() const { return confirmed + refuted + regression + pass; }
  double sum_log_error = 0;  // of the statistic's point estimate (log)
  double rate(int k) const { return runs ? static_cast<double>(k) / runs : 0.0; }
};


// Runs `pairs` comparisons of a baseline drawn from `base` and a candidate from `cand` (seeds derived
// from `seed`), with `options` (a gate, a claim, or neither). `true_log` is the true log of the
// statistic (geomean or max per options/claim) for coverage and bias.
Counts run_pairs(const NoiseModel& base, const NoiseModel& cand, const compare::CompareOptions& options, int pairs,
                 std::uint64_t seed, double true_log);

// The true log statistic of a model's ratio over its rows.
double true_log_geomean(const NoiseModel& m);
double true_log_max(const NoiseModel& m);

// Upper bound of the one-sided Clopper-Pearson interval: the largest rate p with
// P(Binomial(n, p) <= k) >= 1 - confidence... i.e. the rate the data cannot exclude.
double binomial_upper(int k, int n, double confidence);
double binomial_lower(int k, int n, double confidence);

compare::Claim claim_18(compare::Statistic statistic);

// Options of the single-look rule (--looks once): the fixed-count calibration (a launch count fixed
// in advance, asked once) is that rule's; the sequential rule's is test_sequential.cpp.
compare::CompareOptions one_look();

// A team asking again: compare on the first n launches a side of one fleet (the generator is
// sequential, so n launches are the first n of n + 1), n = first, first + 1, ..., last, stopping at
// the first confirmed or refuted verdict. Seeds as in run_pairs.
struct Asked {
  compare::Verdict verdict = compare::Verdict::inconclusive;  // at the look it stopped
  int launches = 0;                                           // launches a side at that look
};
Asked ask_until_decided(NoiseModel base, NoiseModel cand, const compare::CompareOptions& options, std::uint64_t seed,
                        int first, int last);

// `pairs` fleets asked until decided. Wrong verdicts for a claim band [lo, hi] at true ratio r:
// refuted when lo <= r <= hi, confirmed when r <= lo or r >= hi (at an edge both are wrong).
struct AskedCounts {
  int runs = 0, confirmed = 0, refuted = 0, inconclusive = 0;
  std::vector<int> launches;  // of the decided fleets, ascending
  int wrong_refuted = 0, wrong_confirmed = 0;
  // Median launches a side to a decision, counting undecided fleets at `last` (so that a cell where
  // most fleets never decide does not report the few that did).
  double median_launches = 0;
};
AskedCounts run_asked(const NoiseModel& base, const NoiseModel& cand, const compare::CompareOptions& options, int pairs,
                      std::uint64_t seed, double true_ratio, int first, int last);

}  // namespace ccbench::calibration
