// `ccbench run --expect MODEL [--expect-band 99|90] [--stop-below K]`: every row judged against the
// model's band while the sweep runs (model/expectation, as `ccbench model check` judges a file), the
// judgement in the row (`expected`), each row below the band named as its size finishes, and the
// sweep stopped once K rows are below (exit 7, rows kept). docs/run.md, "Is my number normal?".
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "cli/run_options.hpp"
#include "core/result.hpp"
#include "model/expectation.hpp"
#include "sweep/channel.hpp"
#include "sweep/engine.hpp"

namespace ccbench::cli {

// Rank 0's tally over the run, for the summary line.
struct ExpectTally {
  std::string model;
  std::string band;
  int normal = 0, below = 0, above = 0, not_covered = 0;
  std::string first_not_covered;  // the reason of the first row not covered
};

class ExpectCheck final : public SweepCheck {
 public:
  // `expectation` and `shape`: rank 0's (nullopt on the others, which only take part in the stop).
  ExpectCheck(ControlChannel& channel, std::optional<model::Expectation> expectation, model::RunShape shape,
              int stop_below, std::shared_ptr<ExpectTally> tally);
  void annotate(ResultRow& row) override;
  std::optional<SweepStop> after_size(int trial, Op op, std::span<const ResultRow> rows) override;

 private:
  ControlChannel& channel_;
  std::optional<model::Expectation> expectation_;
  model::RunShape shape_;
  int stop_below_;
  std::shared_ptr<ExpectTally> tally_;
};

// Rank 0 loads the model and reads the run's shape from its header (throws ParseError / UsageError
// naming the file: the session agrees it as a set-up error, exit 2); the other ranks make a check
// that only agrees on the stop.
std::unique_ptr<SweepCheck> make_expect_check(ControlChannel& channel, const ResultFile& header,
                                              const ExpectFlags& flags, std::shared_ptr<ExpectTally> tally);

// "# expectation (MODEL, 99% band): 12 rows normal, 2 below" and, when some were not covered, the
// first reason.
std::string expect_summary(const ExpectTally& tally);

}  // namespace ccbench::cli
