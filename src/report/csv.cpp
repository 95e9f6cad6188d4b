// CSV: one line per result row, every number at full precision, RFC 4180 quoting.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/percentiles.hpp"
#include "core/run_metadata.hpp"
#include "report/console_table.hpp"
#include "report/renderers.hpp"
#include "report/report_common.hpp"

namespace ccbench::report {

namespace {

// RFC 4180: a field holding a comma, quote, CR or LF is quoted and its quotes doubled.
std::string field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

constexpr std::array kColumns = {
    "file",           "label",           "op",
    "backend",        "dtype",           "redop",
    "in_place",       "bytes",           "count",
    "ranks",          "trial",           "batch",
    "n_samples",      "samples_kind",    "time_us_min",
    "time_us_median", "time_us_mean",    "time_us_p99",
    "time_us_max",    "time_us_ci95_lo", "time_us_ci95_hi",
    "algbw_gbps",     "busbw_gbps",      "wrong",
    "ci_target_met",  "instance_type",
};

}  // namespace

std::string render_csv(const ReportInput& input) {
  std::string out;
  for (std::size_t i = 0; i < kColumns.size(); ++i) out += fmt::format("{}{}", i ? "," : "", kColumns[i]);
  // run --percentiles: each level's value and CI bounds (empty where a row lacks them).
  const std::vector<double> levels = percentile_levels(input.files);
  for (const double p : levels) {
    const std::string k = percentiles::key(p);
    out += fmt::format(",{}_us,{}_ci95_lo_us,{}_ci95_hi_us", k, k, k);
  }
  // Matrix ops (--matrix, --moe) and patterned sendrecv: their fields (empty where a row lacks
  // them), only when some row has them, as the percentile levels.
  const auto any_row = [&](const auto& has) {
    return std::ranges::any_of(input.files, [&](const ResultFile& f) { return std::ranges::any_of(f.results, has); });
  };
  const bool matrix = any_row([](const ResultRow& r) { return matrix_fields(r).has_value(); });
  const bool pattern = any_row([](const ResultRow& r) { return pattern_fields(r).has_value(); });
  if (matrix) out += ",matrix_imbalance,matrix_most_loaded_gbps,matrix_bound_us";
  if (pattern) out += ",sendrecv_pattern,sendrecv_aggregate_gbps,sendrecv_per_receiver_gbps";
  out += "\r\n";
  const auto labels = display_labels(input.files);
  for (std::size_t f = 0; f < input.files.size(); ++f) {
    const ResultFile& file = input.files[f];
    const std::string instance = RunMetadata(file).text("instance_type");
    for (const ResultRow& r : file.results) {
      const std::vector<std::string> cells = {
          field(file.source),
          field(labels[f]),
          field(r.op),
          field(r.backend),
          field(r.dtype),
          field(r.redop),
          r.in_place ? "true" : "false",
          std::to_string(r.bytes),
          std::to_string(r.count),
          std::to_string(r.ranks),
          std::to_string(r.trial),
          std::to_string(r.batch),
          std::to_string(r.samples_us.size()),
          field(r.samples_kind),
          exact(r.time_us.min),
          exact(r.time_us.median),
          exact(r.time_us.mean),
          exact(r.time_us.p99),
          exact(r.time_us.max),
          has_ci95(r) ? exact(r.time_us.ci95_lo) : std::string(),  // empty: the row has no CI
          has_ci95(r) ? exact(r.time_us.ci95_hi) : std::string(),
          exact(r.algbw_gbps),
          exact(r.busbw_gbps),
          std::to_string(r.wrong),
          r.ci_target_met ? "true" : "false",
          field(instance),
      };
      for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
      for (const double p : levels) {
        const auto level = percentile_value(r, p);
        const bool ci = level && level->ci95_us;
        out += fmt::format(",{},{},{}", level ? exact(level->value_us) : std::string(),
                           ci ? exact(level->ci95_us->first) : std::string(),
                           ci ? exact(level->ci95_us->second) : std::string());
      }
      const auto number = [](const std::optional<double>& v) { return v ? exact(*v) : std::string(); };
      if (matrix) {
        const MatrixFields m = matrix_fields(r).value_or(MatrixFields{});
        out += fmt::format(",{},{},{}", number(m.imbalance), number(m.most_loaded_gbps), number(m.bound_us));
      }
      if (pattern) {
        const PatternFields p = pattern_fields(r).value_or(PatternFields{});
        out += fmt::format(",{},{},{}", field(p.pattern), number(p.aggregate_gbps), number(p.per_receiver_gbps));
      }
      out += "\r\n";
    }
  }
  return out;
}

}  // namespace ccbench::report
