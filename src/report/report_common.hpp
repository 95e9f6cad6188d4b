// Helpers the renderers share: run labels, trial aggregation, metadata flattening, number and text
// formatting. Internal to src/report.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.hpp"

namespace ccbench::report {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One display label per file, unique within the report: run.label, else the file's stem, else "run N".
// Duplicates get " (2)", " (3)", ...
std::vector<std::string> display_labels(const std::vector<ResultFile>& files);

// The identity of a curve: every row of a file that shares it lies on one line (one point per size).
struct SeriesKey {
  std::string op, backend, dtype, redop;
  bool in_place = false;
  auto operator<=>(const SeriesKey&) const = default;
};

// One size of a series, trials folded together: the median over trials of each trial's median time,
// and a band from the lowest to the highest bound of the trials' 95% CIs. NaN where unknown (rows
// imported from a tool that printed only aggregates carry no CI).
struct Point {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  int ranks = 0;
  int trials = 0;
  int root = -1;
  double time_median_us = 0, time_lo_us = kNaN, time_hi_us = kNaN;
  double algbw_gbps = 0, busbw_gbps = 0, busbw_lo_gbps = kNaN, busbw_hi_gbps = kNaN;
  std::uint64_t wrong = 0;
  bool ci_target_met = true;  // every trial met the target
  int launches = 1;           // > 1: folded over that many files (the band is then their range)
};

struct Series {
  SeriesKey key;
  std::vector<Point> points;  // ascending bytes
};

// The median of the values (the mean of the middle two for an even count); NaN for none.
double median_of(std::vector<double> values);

// The series of one file, in the order their ops first appear.
std::vector<Series> build_series(const ResultFile& file);

// Ops in the order they first appear across the files.
std::vector<std::string> ops_in_order(const std::vector<ResultFile>& files);

// "in-place" / "out-of-place".
std::string_view place_name(bool in_place);

// Metadata as (key, text) rows, e.g. ("system.instance_type", "p5en.48xlarge"). Arrays of objects
// (hosts, gpus, efa devices) collapse to their count and the distinct values of each field.
std::vector<std::pair<std::string, std::string>> flatten_metadata(const ResultFile& file);

// A JSON scalar as text: strings unquoted, null as "", numbers in shortest form.
std::string json_text(const nlohmann::json& value);

// A verdict's claim for people: its statement, then its band, metric, statistic, ops, sizes,
// normalisation and requirements, then its source; fields that are absent or empty are left out.
std::string claim_text(const nlohmann::json& claim);

// A p-value for people: "0.032", "<0.0001"; "—" when not a number.
std::string p_value_text(const nlohmann::json& p);

// Shortest text that reads back to the same double (CSV, Prometheus, JSON-like outputs).
std::string exact(double value);
// Human formatting with a fixed number of significant digits ("0.00123", "12.3", "45678").
std::string sig(double value, int digits = 4);
// Sizes for people: 8 -> "8 B", 1536 -> "1.5 KiB", 1048576 -> "1 MiB".
std::string human_bytes(std::uint64_t bytes);

// What the renderers show of a matrix op's row field `matrix` (alltoallv --matrix, moe_*;
// docs/result-format.md). A number the row lacks, or holds as something else, is nullopt: files
// come from other versions and other hands, and a renderer prints "-" rather than throw.
struct MatrixFields {
  std::optional<double> imbalance;         // the most loaded rank's bytes / the mean a rank sends
  std::optional<double> most_loaded_gbps;  // the rate the most loaded rank's off-rank bytes moved at
  std::optional<double> bound_us;          // those bytes at the --link-gbps rate (only with it)
};
// nullopt when the row has no `matrix` object.
std::optional<MatrixFields> matrix_fields(const ResultRow& row);

// ... and of a patterned sendrecv row's `sendrecv_pattern` (--pattern, --block-bytes).
struct PatternFields {
  std::string pattern;                      // ring, pairwise, many-to-one, one-to-many; "" when absent
  std::optional<double> peer_group;         // 0 for ring
  std::optional<double> block_bytes;        // the bytes of one posted block
  std::optional<double> aggregate_gbps;     // every message the pattern moves / the median
  std::optional<double> per_receiver_gbps;  // the most loaded receiver's messages / the median
};
// nullopt when the row has no `sendrecv_pattern` object.
std::optional<PatternFields> pattern_fields(const ResultRow& row);

// ... and of a row's `expected` object: its judgement against a model's band (`ccbench model check
// -o`, `ccbench run --expect`; docs/result-format.md). Strings "" and numbers nullopt where the row
// lacks them: a renderer prints "-" rather than throw.
struct ExpectedFields {
  std::string verdict;  // normal, below, above, not_covered
  std::string metric;   // busbw_gbps, most_loaded_gbps, time_us
  std::string band;     // "90%", "99%"
  std::optional<double> lo, hi, predicted, measured, shortfall_pct;
  std::string basis;   // "measured", "from spec, not validated"
  std::string model;   // the model file
  std::string reason;  // not_covered: what the model lacks
  bool covered() const { return verdict == "normal" || verdict == "below" || verdict == "above"; }
  // The band and prediction in GB/s (or us) of the row's own `busbw_gbps` (`time_median_us`): a
  // bandwidth is a constant over the time, so a band in the other metric converts through the
  // measured value. nullopt when the fields or the row's value are missing.
  struct Converted {
    double lo = 0, hi = 0, predicted = 0;
  };
  std::optional<Converted> as_busbw(double row_busbw_gbps) const;
  std::optional<Converted> as_time(double row_time_us) const;
};
// nullopt when the row has no `expected` object.
std::optional<ExpectedFields> expected_fields(const ResultRow& row);
// Whether any row of the files carries one.
bool any_expected(const std::vector<ResultFile>& files);
// "below +23.4%", "normal -1.2%" (the verdict and the shortfall: > 0 slower than predicted), "not
// covered": what a table cell says of it.
std::string expected_cell(const ExpectedFields& e);

// A value's lookup in a JSON object path ("system", "instance_type"), as text; "" when absent.
std::string meta(const ResultFile& file, std::string_view section, std::string_view key);

}  // namespace ccbench::report
