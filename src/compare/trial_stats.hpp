// Trial-level inference for compare: the launch (trial) is the independent unit, so every test and
// interval that decides a verdict works on the log of each trial's median time, never on the pooled
// samples of a launch (samples inside one launch share that launch's placement and are not
// independent of it). See docs/compare.md "Method".
//
//  - per size: the difference of mean log trial medians with a t interval (Welch when both sides
//    have >= 2 trials, the pooled-variance t when one side has a single trial);
//  - geomean: the same on each trial's mean over sizes (centred per size, so a trial with a missing
//    size still counts), which keeps the correlation between sizes of one launch;
//  - max ("up to"): see max_critical.hpp (its simultaneous level comes from resampled launches);
//  - trend: the slope of each side's trial values against launch order.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace ccbench::compare {

// An estimate of a log ratio log(time_base / time_cand) with its standard error and the degrees of
// freedom of its t distribution. se == 0 means the difference is exact (no spread on either side).
// With >= 2 trials a side there are two: Welch's (se, df) and the pooled-variance t's (se_alt,
// df_alt). Every p-value is the larger of the two and every interval the wider: the pooled t is
// exact when the launch-to-launch variance is the same on both sides (an A/A comparison), where
// Welch's df is too generous in the tail with unbalanced small samples (10 vs 3 trials: 2.4x the
// nominal rate at the Holm level 0.0026); Welch's guards against unequal variances.
struct TShift {
  double estimate = 0;
  double se = 0;
  double df = 0;
  double se_alt = 0;  // 0: none
  double df_alt = 0;
  // max over the two of t_{p}(df) * se: the half-width of a bound at one-sided level p.
  double width(double p) const;
  // Two-sided interval at `confidence` (log space).
  std::pair<double, double> interval(double confidence) const;
  // One-sided p-value of H0: estimate >= bound (i.e. evidence that the true value is below `bound`).
  double p_below(double bound) const;
  // One-sided p-value of H0: estimate <= bound.
  double p_above(double bound) const;
  double p_two_sided(double bound = 0.0) const;
};

// Difference of means of x (baseline log times) and y (candidate log times). Welch's t and the
// pooled-variance t when both sides have >= 2 values; the pooled-variance t alone (equal
// launch-to-launch variance assumed) when one side has 1 and the other >= 2; nullopt when neither
// side has 2 values (no variance estimate).
std::optional<TShift> t_shift(std::span<const double> x, std::span<const double> y);

// Per size and side, the log of each trial's median (NaN where that trial has no row at the size),
// [size][trial], trials in launch order.
struct TrialLogs {
  std::vector<std::vector<double>> baseline;
  std::vector<std::vector<double>> candidate;
};

// Each trial's mean deviation (over the sizes it has) from the per-size means of its side: the
// trial-level component of the geometric mean, in trial order. Trials without any size are skipped.
std::vector<double> trial_deviations(const std::vector<std::vector<double>>& side_logs);

// The geomean's log ratio: mean over sizes of (mean log base - mean log cand), with a t standard
// error from the trial deviations of both sides. nullopt without a variance estimate.
struct GeomeanEstimate {
  double estimate = 0;
  std::optional<TShift> shift;  // estimate, se, df
};
GeomeanEstimate geomean_shift(const TrialLogs& logs);

// Ordinary least-squares slope of `values` against 0, 1, 2, ... with a two-sided t test (n - 2 df).
struct Trend {
  double slope = 0;  // per launch, log space
  double p_value = 1;
  std::size_t n = 0;
};
std::optional<Trend> linear_trend(std::span<const double> values);  // nullopt for n < 4

// One slope shared by two series (each with its own intercept), each against its own 0, 1, 2, ...:
// a drift of the machine common to both sides, tested with n_a + n_b - 3 df. Series with fewer than
// 3 values do not count; nullopt when fewer than 5 values count in all.
std::optional<Trend> common_trend(std::span<const double> a, std::span<const double> b);

// Student's t quantile: the t with P(T <= t) = p (df > 0).
double student_t_quantile(double p, double df);

}  // namespace ccbench::compare
