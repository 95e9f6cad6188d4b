// "Is my number normal?": a result row judged against a model's band for its profile, node count,
// ranks per node, op, dtype and size (docs/model.md, "Is my number normal? model check"). Pure: a
// model and a row in, a verdict out; `ccbench model check` calls it per row of a file, and `ccbench
// run --expect MODEL` per row while the sweep runs (load once, judge each row as it is finished).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "model/model.hpp"

namespace ccbench::model {

// normal: inside the band; below: slower than the band (busbw under it, or time over it); above:
// faster than the band; not_covered: the model has no curve for the row (RowExpectation::missing
// says what it lacks).
enum class Verdict : std::uint8_t { normal, below, above, not_covered };

// What a row is judged on: busbw where the bytes terms dominate the predicted time, the time where
// the latency terms do (Prediction::latency_share > 1/2: a latency-bound size's busbw is mostly its
// latency divided into the bytes, and says nothing a time does not); a matrix op's bandwidth is its
// most loaded rank's off-rank bytes over the time (docs/model.md, "What is fitted").
enum class ExpectedMetric : std::uint8_t { busbw_gbps, most_loaded_gbps, time_us };

// The model's 90% band, or the 99% band of the same error model: the 90% half-widths on log scale
// times z(0.995) / z(0.95) (expectation.cpp, band_of).
enum class BandLevel : std::uint8_t { p90, p99 };

// measured: the model fitted rows of the row's profile; from_spec: it did not, and answers from the
// profile's spec (configs/instances/aws.yaml) times an efficiency learned on another profile.
enum class Basis : std::uint8_t { measured, from_spec };

// What a not_covered row's model lacks.
enum class Missing : std::uint8_t {
  none,
  row,             // the row is of a kind no model fits (1 rank, concurrent groups, a matrix op without its L)
  op,              // no curve for the op at all
  profile,         // the profile was not measured, has no spec, or the expectation is another profile's
  ranks_per_node,  // the op on that profile was fitted with other ranks per node only
  node_count,      // outside the fitted node counts (JudgeOptions::extrapolate judges there)
  dtype,           // the curve was fitted on other element types
  size_range,      // outside the sizes measured at or around the node count
  statistic,       // the model answers a percentile the row does not carry (or the median, and the row ...)
};

std::string_view name(Verdict verdict);                      // "normal", "below", "above", "not_covered"
std::string_view name(ExpectedMetric metric);                // "busbw_gbps", "most_loaded_gbps", "time_us"
std::string_view name(BandLevel band);                       // "90%", "99%"
std::string_view name(Basis basis);                          // "measured", "from spec, not validated"
std::string_view name(Missing missing);                      // "", "row", "op", "profile", "ranks per node", ...
std::optional<BandLevel> parse_band(std::string_view text);  // "90", "99", "90%", "99%"

// The two-sided normal quantiles of the bands: the 5%/95% and 0.5%/99.5% points.
inline constexpr double kZ90 = 1.6448536269514722;
inline constexpr double kZ99 = 2.5758293035489004;

// A prediction's time band at a level: the 90% band as Model::predict gives it, or the 99% band with
// both half-widths on log scale scaled by kZ99 / kZ90 (1.5660). Model::predict's 90% half-width is
// 1.645 x a normal error on log scale combined with the refits' 5% / 95% quantiles; read as the same
// normal's quantiles, each part scales by the same ratio, and so does their root sum of squares (or
// their maximum, for an extrapolation), so the scaling is exact under the model's own error model.
struct TimeBandUs {
  double lo = 0, hi = 0;
};
TimeBandUs band_of(const Prediction& prediction, BandLevel band);

// What a judge needs of a run: its profile as `model fit` names it (the instance type
// configs/instances/aws.yaml knows, else the run's label, else the fabric path), nodes and ranks per
// node.
struct RunShape {
  std::string profile;
  int nodes = 0;
  int ranks_per_node = 0;  // 0: each row's ranks / nodes
};
// Throws ParseError "FILE: system.nodes: missing ..." when the file records no node count: a
// judgement at a guessed node count would be a judgement of another run.
RunShape run_shape(const ResultFile& file);

struct JudgeOptions {
  BandLevel band = BandLevel::p99;
  // Judge rows outside the fitted node counts and sizes too, against the model's widened
  // (extrapolated) band, instead of calling them not_covered.
  bool extrapolate = false;
};

struct RowExpectation {
  Verdict verdict = Verdict::not_covered;
  ExpectedMetric metric = ExpectedMetric::busbw_gbps;
  BandLevel band = BandLevel::p99;
  // In the metric's unit (GB/s or us): the band, the model's value and the row's.
  double lo = 0, hi = 0, predicted = 0, measured = 0;
  // How much slower than predicted, in percent of the metric: busbw 100 (1 - measured / predicted),
  // time 100 (measured / predicted - 1). Negative: faster.
  double shortfall_pct = 0;
  Basis basis = Basis::measured;
  bool extrapolated = false;  // judged outside the fitted range (JudgeOptions::extrapolate)
  std::string model;          // the model file as given, or the name the Expectation was made with
  std::string profile;        // the profile judged
  Missing missing = Missing::none;
  std::string reason;  // not_covered: one line, "model p5.json has no allreduce on ... at 2 nodes x 8 ranks: ..."
};

class Expectation {
 public:
  // Loads a model file (`ccbench model fit`'s, or one of configs/expect/). A file with a top-level
  // "expectation" object naming a "profile" judges rows of that profile only. Throws ParseError
  // naming the file and key, as Model::load.
  static Expectation load(const std::string& model_path, JudgeOptions options = {});
  // `name` is what rows' `expected.model` says; `only_profile` as the file's expectation.profile.
  Expectation(Model model, std::string name, JudgeOptions options = {}, std::optional<std::string> only_profile = {});

  // One row of a run of that shape. Never throws for a row the model cannot answer: that is a
  // not_covered verdict with its reason.
  RowExpectation judge(const RunShape& shape, const ResultRow& row) const;
  // The same, the shape read from the file's metadata (run_shape: throws when it has no node count).
  RowExpectation judge(const ResultFile& file, const ResultRow& row) const;

  const Model& model() const { return model_; }
  const std::string& name() const { return name_; }
  const JudgeOptions& options() const { return options_; }
  const std::optional<std::string>& only_profile() const { return only_profile_; }

 private:
  Model model_;
  std::string name_;
  JudgeOptions options_;
  std::optional<std::string> only_profile_;
};

// The row's `expected` object (docs/result-format.md): verdict, metric, band, lo, hi, predicted,
// measured, shortfall_pct, basis, model, profile (and extrapolated when true); a not_covered row
// has verdict, model, profile, missing and reason only.
nlohmann::json to_json(const RowExpectation& expectation);

}  // namespace ccbench::model
