#include "cli/run_expect.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/sizes.hpp"

namespace ccbench::cli {

ExpectCheck::ExpectCheck(ControlChannel& channel, std::optional<model::Expectation> expectation, model::RunShape shape,
                         int stop_below, std::shared_ptr<ExpectTally> tally)
    : channel_(channel),
      expectation_(std::move(expectation)),
      shape_(std::move(shape)),
      stop_below_(stop_below),
      tally_(std::move(tally)) {}

void ExpectCheck::annotate(ResultRow& row) {
  if (!expectation_) return;
  const model::RowExpectation e = expectation_->judge(shape_, row);
  row.extra["expected"] = model::to_json(e);
  switch (e.verdict) {
    case model::Verdict::normal:
      ++tally_->normal;
      break;
    case model::Verdict::below:
      ++tally_->below;
      break;
    case model::Verdict::above:
      ++tally_->above;
      break;
    case model::Verdict::not_covered:
      if (tally_->not_covered++ == 0) tally_->first_not_covered = e.reason;
      break;
  }
}

namespace {

std::string value_text(const nlohmann::json& e, const char* key) {
  const double v = e.value(key, 0.0);
  if (e.value("metric", "") == "time_us")
    return v >= 1000 ? fmt::format("{:.3g} ms", v / 1000) : fmt::format("{:.3g} us", v);
  return fmt::format("{:.3g} GB/s", v);
}

}  // namespace

std::optional<SweepStop> ExpectCheck::after_size(int /*trial*/, Op /*op*/, std::span<const ResultRow> rows) {
  // Printed after the size's rows, so each line follows the row it names.
  for (const ResultRow& r : rows) {
    const auto e = r.extra.find("expected");
    if (e == r.extra.end() || e->value("verdict", "") != "below") continue;
    std::printf("# below the expectation: %s %s %s: %s, %s band [%s, %s], predicted %s (%+.1f%%)\n", r.op.c_str(),
                format_bytes(r.bytes).c_str(), r.in_place ? "in-place" : "out-of-place",
                value_text(*e, "measured").c_str(), e->value("band", "").c_str(), value_text(*e, "lo").c_str(),
                value_text(*e, "hi").c_str(), value_text(*e, "predicted").c_str(), e->value("shortfall_pct", 0.0));
  }
  if (stop_below_ <= 0) return std::nullopt;
  const int below = channel_.broadcast(channel_.is_root() ? tally_->below : 0);
  if (below < stop_below_) return std::nullopt;
  return SweepStop{
      exit_code::below_expectation,
      fmt::format("--stop-below {}: {} row{} below the expectation of {}; the sweep stopped, its rows kept",
                  stop_below_, below, below == 1 ? "" : "s", tally_->model)};
}

std::unique_ptr<SweepCheck> make_expect_check(ControlChannel& channel, const ResultFile& header,
                                              const ExpectFlags& flags, std::shared_ptr<ExpectTally> tally) {
  model::JudgeOptions options;
  const auto band = model::parse_band(flags.band);
  if (!band) throw UsageError(fmt::format("--expect-band: {} is not a band; 90 or 99 (percent)", flags.band));
  options.band = *band;
  tally->model = flags.model_path;
  tally->band = std::string(model::name(*band));
  std::optional<model::Expectation> expectation;
  model::RunShape shape;
  if (channel.is_root()) {
    expectation = model::Expectation::load(flags.model_path, options);
    shape = model::run_shape(header);
  }
  return std::make_unique<ExpectCheck>(channel, std::move(expectation), std::move(shape), flags.stop_below,
                                       std::move(tally));
}

std::string expect_summary(const ExpectTally& t) {
  std::vector<std::string> parts;
  for (const auto& [n, what] : {std::pair{t.normal, "normal"}, std::pair{t.below, "below"}, std::pair{t.above, "above"},
                                std::pair{t.not_covered, "not covered"}})
    if (n > 0) parts.push_back(fmt::format("{} {}", n, what));
  std::string joined;
  for (const auto& p : parts) joined += (joined.empty() ? "" : ", ") + p;
  std::string out =
      fmt::format("# expectation ({}, {} band): {}\n", t.model, t.band, joined.empty() ? "no rows" : joined);
  if (t.not_covered > 0) out += fmt::format("# not covered: {}\n", t.first_not_covered);
  return out;
}

}  // namespace ccbench::cli
