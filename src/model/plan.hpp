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

// A phase's communication: the sum of its priced rows, once (a decode step, not all of a request's).
struct PhaseTotal {
  Phase phase = Phase::step;
  Interval total_us;
  int rows = 0;
  int unpriced = 0;
};

struct ProfilePlan {
  std::string profile;
  std::vector<PricedCollective> rows;  // in the order of step_collectives()
  // Sum over priced rows of their step time x per_request: a training step's communication, or one
  // serving request's (prefill + KV transfer + generated_tokens x a decode step).
  Interval total_us;
  Interval exposed_us;             // the same over priced rows that do not overlap compute
  std::vector<PhaseTotal> phases;  // in the order the rows first name them
  int unpriced = 0;
  bool extrapolated = false;  // some row was outside the fitted node counts or sizes
  bool from_spec = false;     // some row came from the profile's spec, not a measurement
};

struct PhaseMigration {
  Phase phase = Phase::step;
  int rows_compared = 0;
  Interval from_us, to_us, delta_us, ratio;  // once per phase, over the rows priced on both
};

struct Migration {
  std::string from, to;
  int rows_compared = 0;  // rows priced on both profiles; the totals below are over those rows
  Interval from_total_us, to_total_us;
  Interval delta_total_us, delta_exposed_us;  // to - from
  Interval ratio_total, ratio_exposed;        // to / from (NaN when from is 0)
  std::vector<PhaseMigration> phases;
};

struct Plan {
  Workload workload;
  std::vector<StepCollective> step;
  std::vector<ProfilePlan> profiles;
  std::optional<Migration> migration;
};

// One call of an op at one size on a profile, the one pricing of a call that `plan` and a trace's
// pricing (trace_price.hpp) share: the op's own curve, else for all-gather and reduce-scatter half an
// all-reduce of the same S (said in the note); not priced: the model's reason in the note.
struct CallPrice {
  bool priced = false;
  std::string note;
  Prediction per_call;  // valid when priced
};
CallPrice price_call(const PredictQuery& query, const Pricer& price);

// The interval arithmetic of docs/model.md "Pricing and intervals": `calls` calls of one price; a
// sum (bands added: the rows share one model, their errors taken as fully correlated); to - from
// and to / from with the two bands at opposite ends (at least 90% whatever the correlation; a
// ratio to 0 is NaN).
Interval times(double calls, const Prediction& per_call);
void add_interval(Interval& sum, const Interval& x);
Interval interval_difference(const Interval& from, const Interval& to);
Interval interval_ratio(const Interval& from, const Interval& to);
nlohmann::json interval_json(const Interval& x);  // {value, lo, hi}, null where not finite

// Prices with several models: the first that measured the op on the profile answers, else the
// first that has the op at all (from the profile's spec), else the first model (its error). A
// fabric curve in one model file and the collectives in another both price. The models must outlive
// the Pricer.
Pricer first_measured(const std::vector<Model>& models);
// `--migrate FROM:TO`; throws UsageError naming the flag when it is not two profiles.
std::pair<std::string, std::string> parse_migrate(const std::string& text);
// The profiles to price: those `--profiles` names (comma-separated, spaces and empty items
// skipped), else every profile a model measured; plus the migration's.
std::vector<std::string> profiles_to_price(const std::vector<Model>& models, const std::string& profiles_flag,
                                           const std::optional<std::pair<std::string, std::string>>& migration);

ProfilePlan price_step(const std::vector<StepCollective>& step, const std::string& profile, const Pricer& price);
Migration migrate(const ProfilePlan& from, const ProfilePlan& to);

// Prices the workload's step on each profile; `migration` (from, to) must name two of `profiles`.
Plan make_plan(const Workload& workload, const std::vector<std::string>& profiles, const Pricer& price,
               const std::optional<std::pair<std::string, std::string>>& migration);

// The plan document (`ccbench model plan --format json`, read by `ccbench report --plan`).
nlohmann::json to_json(const Plan& plan);

}  // namespace ccbench::model
