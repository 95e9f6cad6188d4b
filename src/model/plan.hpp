// `ccbench model plan`: the collectives of one training step priced on instance profiles, and the
// migration delta between two of them (docs/model.md, "Planning a training step").
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/model.hpp"
#include "model/workload.hpp"

namespace ccbench::model {

inline constexpr int kPlanVersion = 1;

// Prices one call: Model::predict in the CLI; tests pass a curve with known parameters. Throws
// UsageError when it cannot answer (the row is then listed as not priced, with the reason).
using Pricer = std::function<Prediction(const PredictQuery&)>;

// A value and its 90% interval.
struct Interval {
  double value = 0, lo = 0, hi = 0;
};

struct PricedCollective {
  StepCollective step;
  bool priced = false;
  std::string note;     // the reason it is not priced, or how it was ("half an all-reduce ...")
  Prediction per_call;  // valid when priced
  Interval step_us;     // count x the per-call time
};

struct ProfilePlan {
  std::string profile;
  std::vector<PricedCollective> rows;  // in the order of step_collectives()
  Interval total_us;                   // sum over priced rows
  Interval exposed_us;                 // sum over priced rows that do not overlap compute
  int unpriced = 0;
  bool extrapolated = false;  // some row was outside the fitted node counts or sizes
  bool from_spec = false;     // some row came from the profile's spec, not a measurement
};

struct Migration {
  std::string from, to;
  int rows_compared = 0;  // rows priced on both profiles; the totals below are over those rows
  Interval from_total_us, to_total_us;
  Interval delta_total_us, delta_exposed_us;  // to - from
  Interval ratio_total, ratio_exposed;        // to / from (NaN when from is 0)
};

struct Plan {
  Workload workload;
  std::vector<StepCollective> step;
  std::vector<ProfilePlan> profiles;
  std::optional<Migration> migration;
};

ProfilePlan price_step(const std::vector<StepCollective>& step, const std::string& profile, const Pricer& price);
Migration migrate(const ProfilePlan& from, const ProfilePlan& to);

// Prices the workload's step on each profile; `migration` (from, to) must name two of `profiles`.
Plan make_plan(const Workload& workload, const std::vector<std::string>& profiles, const Pricer& price,
               const std::optional<std::pair<std::string, std::string>>& migration);

// The plan document (`ccbench model plan --format json`, read by `ccbench report --plan`).
nlohmann::json to_json(const Plan& plan);

}  // namespace ccbench::model
