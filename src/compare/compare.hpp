// The comparison pipeline, load -> match -> analyse -> summarise -> decide (one stage a file:
// load.cpp, match.cpp + metadata.cpp, analyse.cpp, summarise.cpp, decide.cpp), and its result model,
// which the renderers turn into text, markdown or the verdict's JSON (docs/verdict-format.md).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compare/claim.hpp"
#include "compare/decide.hpp"
#include "compare/match.hpp"
#include "compare/metadata.hpp"
#include "compare/moderated_spread.hpp"
#include "compare/sequential.hpp"
#include "compare/trial_stats.hpp"

namespace ccbench::compare {

using Interval = std::pair<double, double>;

// The independent unit of a per-size test: per-trial medians, or pooled samples (too few trials).
enum class Unit { trials, samples };
// The regression gate's per-size test on log trial medians: Welch's t, the pooled-variance t (one
// side has a single trial), or none (one trial a side: nothing can be tested).
enum class GateTest { none, welch_t, pooled_t };
// How the across-size intervals were made: none (one trial a side) or t intervals on trial-level
// values (docs/compare.md).
enum class CiMethod { none, t };
// JSON/text spellings: "trials"/"samples", "none"/"welch_t"/"pooled_t", ""/"t".
std::string_view name(Unit unit);
std::string_view name(GateTest test);
std::string_view name(CiMethod method);

struct CompareOptions {
  std::vector<std::string> baseline;  // files or folders
  std::vector<std::string> candidate;
  std::optional<Claim> claim;  // from --claim or the --expect-speedup flags
  std::optional<Gate> gate;
  Metric metric = Metric::busbw;             // when there is no claim
  Statistic statistic = Statistic::geomean;  // when there is no claim
  // --statistic pNN: each trial's pNN (rows measured with --percentiles) instead of its median.
  std::optional<double> row_percentile;
  std::optional<Normalize> normalize;        // overrides the claim's
  Scope scope;                               // flags; narrowed further by the claim
  std::set<std::string> allow_mismatch;
  std::uint64_t seed = 20250709;
  // The max's simultaneous lower bound: 0 is Bonferroni over the sizes (valid for any dependence and
  // launch count); N > 0 resamples whole launches (docs/compare.md: under-covers with few launches).
  int resamples = 0;
  int min_trials = 5;   // trials per side for trial-level tests and for a claim verdict
  double alpha = 0.05;  // per-size significance level
  // sequential: verdicts stay valid when asked again after adding launches (sequential.hpp);
  // once: a single look at a launch count fixed in advance.
  Looks looks = Looks::sequential;
  // The max's per-size spreads: moderated toward the sizes' shared spread, or each size's own
  // (moderated_spread.hpp).
  Spread spread = Spread::moderated;
};

struct SideAtSize {
  double median_us = 0;           // the pooled median, or the pooled pNN under --statistic pNN
  std::optional<Interval> ci_us;  // 95% order-statistic CI of it; absent for summaries or too few samples
  std::size_t samples = 0;
  std::size_t trials = 0;
  bool summary = false;
  double busbw_gbps = 0;  // from the median time
  std::optional<Interval> busbw_ci;
  std::size_t rows_ci_not_met = 0;
  std::uint64_t wrong = 0;
};

struct RowResult {
  RowKey key;
  double ratio = 1;            // in the normalisation in use
  std::optional<Interval> ci;  // 95%
  double ratio_raw = 1;
  std::optional<Interval> ci_raw;
  double p_value = 1;
  bool mw_exact = false;
  bool significant = false;
  Unit unit = Unit::samples;  // trials (per-trial medians) or samples (pooled samples)
  // The regression gate's per-size test, always on trials: one-sided t of "more than the threshold
  // slower" (Welch's, or the pooled-variance t when one side has a single trial).
  double p_gate = 1;
  GateTest gate_test = GateTest::none;  // none: one trial a side, no test
  // Trial-level estimate of log(time_base / time_cand), raw (before normalisation): the difference
  // of mean log trial medians with its t standard error. Absent with one trial on each side.
  std::optional<TShift> trial_shift;
  SideAtSize baseline;
  SideAtSize candidate;
  std::optional<double> p_holm;  // gate only
  bool regression = false;       // gate only
};

struct StatisticValue {
  double ratio = 1;  // raw, before normalisation
  std::optional<Interval> ci95;
  std::optional<Interval> ci90;
  std::optional<double> p_value;  // geomean only: two-sided test of ratio 1
  std::optional<RowKey> at;       // for max: the size that holds it
  std::optional<TShift> shift;    // geomean only: log ratio with its t standard error
};

// A trend of a side's trial values against launch order (trials in file order, folders by name).
struct SideTrend {
  double slope_per_launch = 0;  // log space: 0.005 is about +0.5% time per launch
  double p_value = 1;
  std::size_t trials = 0;
  bool detected = false;  // p below the trend level (docs/compare.md "Drift")
};

struct Summary {
  Statistic statistic = Statistic::geomean;  // the one the verdict uses
  StatisticValue geomean;
  StatisticValue max;
  std::size_t sizes = 0;
  double normalization = 1.0;  // the factor in use: raw ratios times this are the verdict's ratios
  bool normalized = false;     // the verdict uses link-normalised ratios
  // geomean and max with the factor in use applied (once, by normalise.cpp); the gate, the claim
  // decision and every renderer read these. Equal to geomean and max when not normalised.
  StatisticValue geomean_used;
  StatisticValue max_used;
  // The statistic the verdict uses, normalised by link bandwidth, whenever both links are known
  // (shown beside the raw one when the links differ), and that factor.
  std::optional<StatisticValue> link_normalised;
  std::optional<double> link_factor;
  std::uint64_t seed = 0;
  int resamples = 0;
  // t (t intervals on trial-level values; the max's interval is simultaneous over sizes) or none
  // (no CI: one trial on each side, so launch-to-launch variation is unknown).
  CiMethod ci_method = CiMethod::none;
  // The max's lower bounds: the one-sided per-size level at which they hold for all sizes at once
  // (from resampled launches, max_critical.hpp), for its 95% and 90% intervals.
  double max_lower_level95 = 0.025;
  double max_lower_level90 = 0.05;
  double max_one_look_level95 = 0.025;  // the same for one look, before the rule below
  double max_one_look_level90 = 0.05;
  // The rule every interval and test of the verdict uses: one look, or looks from first_look to
  // kLastLook launches a side (sequential.hpp); the levels above and the intervals include it.
  LookRule looks;
  // The max's per-size t estimates (their spreads per `spread`, moderated_spread.hpp), one a row,
  // and the priors they were moderated by; the rows' own intervals stay per size.
  Spread spread = Spread::moderated;
  std::vector<TShift> max_shifts;
  SpreadPrior spread_prior_baseline, spread_prior_candidate, spread_prior_pooled;
  // Drift across launches: one slope common to both sides (an intercept a side) and each side's own
  // trend (with >= 4 trials), false-flag rate kDriftFlagRate in all (docs/compare.md "Drift").
  std::optional<SideTrend> drift;
  std::optional<SideTrend> baseline_trend;
  std::optional<SideTrend> candidate_trend;
  // The step's is the geomean over its one row (that row's trial-level t), so it is read from there.
  const StatisticValue& used() const { return statistic == Statistic::max ? max : geomean; }  // raw
  const StatisticValue& used_normalised() const { return statistic == Statistic::max ? max_used : geomean_used; }
};

struct SideInfo {
  std::vector<std::string> inputs;
  std::size_t files = 0;
  int trials = 0;
  std::optional<double> link_gbps;
};

// Whether a drift across launches was detected (common or on either side).
bool drift_detected(const Summary& s);

struct Comparison {
  Verdict verdict = Verdict::none;  // exit_code(verdict) is the command's exit code
  std::string reason;
  std::optional<Claim> claim;
  std::optional<Gate> gate;
  Metric metric = Metric::busbw;
  Normalize normalize = Normalize::none;
  std::optional<double> row_percentile;  // --statistic pNN: the per-trial statistic (else the median)
  Summary summary;
  std::vector<RowResult> rows;
  std::vector<Difference> differences;
  std::vector<std::string> mismatches;
  std::vector<std::string> warnings;
  std::vector<RowKey> only_in_baseline;
  std::vector<RowKey> only_in_candidate;
  SideInfo baseline;
  SideInfo candidate;
  std::optional<int> trials_needed;    // inconclusive: launches per side estimated to decide it
  bool drift_changed_verdict = false;  // a drift flag turned a decisive verdict inconclusive
  std::vector<std::string> gate_failures;
  bool geomean_regression = false;
  int min_trials = 5;
  double alpha = 0.05;
  std::string trace_sha256;  // --statistic step: the trace both sides replayed
};

// The largest bias (log) a detected drift can put between the sides' means: when one side's launches
// all ran before the other's, their mean launch indices are (n_baseline + n_candidate) / 2 apart.
// 0 without a detected drift.
double drift_bias_log(const Comparison& c);

// Runs the whole pipeline. Throws UsageError/ParseError (exit 2) for bad input; every other outcome
// is a Comparison with its verdict and exit code.
Comparison compare_runs(const CompareOptions& options);

// Same, on sides already loaded (tests and the benchmark use it).
Comparison compare_sides(const Side& baseline, const Side& candidate, const CompareOptions& options);

std::string format_key(const RowKey& key);  // "allreduce 64M" (+ " in-place", dtype when not float)

}  // namespace ccbench::compare
