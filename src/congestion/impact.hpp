// The congestion impact factor (docs/method.md "Congestion impact factor"): per test and pattern,
// congested / isolated of the median and of the p99 time (> 1 = slower under congestion), with a
// 95% interval from the comparator's trial-level t (compare/trial_stats), and the --max-impact gate.
//
// The unit is the trial: each trial holds one isolated and one congested phase of the pattern next
// to each other; its log ratio d_t = log(stat(congested_t)) - log(stat(isolated_t)) is one
// observation. The factor is exp(mean d_t) (the geometric mean of the per-trial ratios); the
// interval exp(mean d +- t_{0.975, n-1} sd(d) / sqrt(n)) (a paired t on the logs), as compare's
// trial-level t but paired, because the two phases of a trial share the trial's placement and drift.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compare/trial_stats.hpp"

namespace ccbench::congestion {

// One trial's samples of one test under one pattern.
struct TrialPair {
  int trial = 0;
  std::vector<double> isolated_us;
  std::vector<double> congested_us;
};

struct Factor {
  double estimate = 0;                            // congested / isolated
  std::optional<std::pair<double, double>> ci95;  // none with fewer than 2 trials
  std::optional<compare::TShift> shift;           // log space: estimate, se, df (n - 1)
  int trials = 0;
  std::optional<double> p_gate;  // one-sided p of H0 "factor <= --max-impact"
  std::optional<double> p_holm;  // Holm-adjusted over every factor of the run
  bool above = false;            // the gate found this factor above --max-impact
  std::string not_computed;      // why there is no factor (p99 from too few samples); the gate skips it
};

// A p99 from fewer samples than this per phase is the phase's largest sample or close to it, not a
// tail (with -n 1 it is the median itself): no p99 factor is computed and the gate judges medians.
inline constexpr std::size_t kMinSamplesForP99 = 5;

struct ImpactRow {
  std::string op;
  std::uint64_t bytes = 0;
  std::string pattern;
  // Pooled over the trials (every sample of the phase kind), for the table.
  double isolated_median_us = 0, isolated_p99_us = 0;
  double congested_median_us = 0, congested_p99_us = 0;
  std::size_t isolated_samples = 0, congested_samples = 0;
  Factor median;
  Factor p99;
};

// The factor of one statistic from per-trial values (isolated, congested), both > 0.
Factor impact_factor(const std::vector<std::pair<double, double>>& per_trial, double confidence = 0.95);

ImpactRow impact_row(const std::string& op, std::uint64_t bytes, const std::string& pattern,
                     const std::vector<TrialPair>& trials);

// "allreduce 8 B", "alltoall 1 MiB".
std::string test_name(const std::string& op, std::uint64_t bytes);

// The gate (`--max-impact M`), one Holm-Bonferroni family over every factor (median and p99 of
// every test and pattern), like compare's regression gate:
//   above (exit 1): some factor is shown above M (one-sided paired t of H0 "factor <= M" rejected at
//                   Holm-adjusted alpha);
//   undecidable (4): none is, but some factor has fewer than 2 trials, or its estimate is above M
//                   without the data showing it;
//   pass (0): every factor's estimate is at most M.
enum class GateVerdict { pass, above, undecidable };
struct GateResult {
  GateVerdict verdict = GateVerdict::pass;
  int exit_code = 0;
  std::string reason;
};
std::string_view name(GateVerdict v);
GateResult apply_gate(std::vector<ImpactRow>& rows, double max_impact, double alpha = 0.05);

// The console table (one line per test and pattern).
std::string render_table(const std::vector<ImpactRow>& rows);

nlohmann::json to_json(const Factor& f);
nlohmann::json to_json(const ImpactRow& row);

}  // namespace ccbench::congestion
