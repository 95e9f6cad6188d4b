#include "report/console_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/percentiles.hpp"
#include "report/report_common.hpp"

namespace ccbench::report {

bool has_ci95(const ResultRow& row) {
  const auto& t = row.time_us;
  return t.median > 0 && t.ci95_lo > 0 && t.ci95_hi > 0;
}

double ci_percent(const ResultRow& row) {
  const auto& t = row.time_us;
  if (!has_ci95(row)) return std::numeric_limits<double>::quiet_NaN();
  return 100.0 * std::max(t.median - t.ci95_lo, t.ci95_hi - t.median) / t.median;
}

namespace {

std::string time_text(double t) {
  return t >= 1e4 ? fmt::format("{:.0f}", t) : t >= 100 ? fmt::format("{:.1f}", t) : fmt::format("{:.2f}", t);
}

}  // namespace

std::string percentile_header(std::span<const double> percentiles, bool units, int variants) {
  std::string out;
  for (int variant = 0; variant < variants; ++variant) {
    for (const double p : percentiles) {
      out +=
          units ? fmt::format(" {:>9} {:>6}", "(us)", "(±%)") : fmt::format(" {:>9} {:>6}", percentiles::key(p), "ci");
    }
  }
  return out;
}

std::string percentile_columns(const ResultRow* row, std::span<const double> percentiles) {
  std::string out;
  for (const double p : percentiles) {
    const auto level = row != nullptr ? percentile_value(*row, p) : std::nullopt;
    if (!level) {
      out += fmt::format(" {:>9} {:>6}", "-", "-");
      continue;
    }
    const double value = level->value_us;
    const std::string ci =
        level->ci95_us && value > 0
            ? fmt::format("{:.1f}",
                          100.0 * std::max(value - level->ci95_us->first, level->ci95_us->second - value) / value)
            : std::string("-");
    out += fmt::format(" {:>9} {:>6}", time_text(value), ci);
  }
  return out;
}

std::optional<PercentileValue> percentile_value(const ResultRow& row, double percent) {
  if (!row.extra.contains("percentiles_us") || !row.extra["percentiles_us"].is_object()) return std::nullopt;
  const auto& levels = row.extra["percentiles_us"];
  const std::string k = percentiles::key(percent);
  if (!levels.contains(k) || !levels[k].is_object() || !levels[k].contains("value") || !levels[k]["value"].is_number())
    return std::nullopt;
  PercentileValue out;
  out.value_us = levels[k]["value"].get<double>();
  const auto& ci = levels[k].contains("ci95") ? levels[k]["ci95"] : nlohmann::json();
  if (ci.is_array() && ci.size() == 2 && ci[0].is_number() && ci[1].is_number())
    out.ci95_us = std::pair{ci[0].get<double>(), ci[1].get<double>()};
  return out;
}

std::vector<double> percentile_levels(std::span<const ResultFile> files) {
  std::set<double> levels;
  for (const auto& file : files) {
    for (const double p : percentile_levels(file.results)) levels.insert(p);
  }
  return {levels.begin(), levels.end()};
}

std::vector<double> percentile_levels(std::span<const ResultRow> rows) {
  std::set<double> levels;
  for (const auto& row : rows) {
    if (!row.extra.contains("percentiles_us") || !row.extra["percentiles_us"].is_object()) continue;
    for (const auto& [k, v] : row.extra["percentiles_us"].items()) {
      if (const auto p = percentiles::parse_statistic(k)) levels.insert(*p);
    }
  }
  return {levels.begin(), levels.end()};
}

void TableColumns::include(const ResultRow& row) {
  if (const auto m = matrix_fields(row)) {
    matrix = true;
    matrix_bound = matrix_bound || m->bound_us.has_value();
  }
  sendrecv_pattern = sendrecv_pattern || pattern_fields(row).has_value();
  expected = expected || expected_fields(row).has_value();
}

namespace {

// The title over a column set's two variants, each `width` characters, as --percentiles has it.
std::string variant_titles(std::size_t width) {
  return fmt::format("{:>{}}{:>{}}", "out-of-place", width, "in-place", width);
}

// A number cell of the extra sets: 2 decimals, or a time as the time column prints it; "-" when
// the row lacks the field.
std::string number_cell(const std::optional<double>& value, int width, bool time = false) {
  return fmt::format(" {:>{}}",
                     !value ? std::string("-")
                     : time ? time_text(*value)
                            : fmt::format("{:.2f}", *value),
                     width);
}

// A matrix op's columns of one variant: name line, unit line, or (`row`, null for none) its values.
// imbal is a ratio, loaded the most loaded rank's GB/s, bound its bytes' time at --link-gbps in us.
constexpr std::size_t kMatrixWidth = 7 + 10, kBoundWidth = 10;
std::string matrix_names(bool bound, bool units) {
  return fmt::format(" {:>6} {:>9}", units ? "" : "imbal", units ? "(GB/s)" : "loaded") +
         (bound ? fmt::format(" {:>9}", units ? "(us)" : "bound") : std::string());
}
std::string matrix_columns(const ResultRow* row, bool bound) {
  const MatrixFields m = (row != nullptr ? matrix_fields(*row) : std::nullopt).value_or(MatrixFields{});
  return number_cell(m.imbalance, 6) + number_cell(m.most_loaded_gbps, 9) +
         (bound ? number_cell(m.bound_us, 9, true) : std::string());
}

// A patterned sendrecv's columns of one variant: the pattern's aggregate and per-receiver GB/s.
constexpr std::size_t kPatternWidth = 10 + 10;
std::string pattern_names(bool units) {
  return units ? fmt::format(" {:>9} {:>9}", "(GB/s)", "(GB/s)") : fmt::format(" {:>9} {:>9}", "agg", "recv");
}
std::string pattern_columns(const ResultRow* row) {
  const PatternFields p = (row != nullptr ? pattern_fields(*row) : std::nullopt).value_or(PatternFields{});
  return number_cell(p.aggregate_gbps, 9) + number_cell(p.per_receiver_gbps, 9);
}

// The judgement against a model of one variant: "below +23.4%" (verdict, shortfall), "-" for none.
constexpr std::size_t kExpectedWidth = 14;
std::string expected_names(bool units) { return fmt::format(" {:>13}", units ? "(shortfall)" : "expect"); }
std::string expected_column(const ResultRow* row) {
  const auto e = row != nullptr ? expected_fields(*row) : std::nullopt;
  return fmt::format(" {:>13}", e ? expected_cell(*e) : std::string("-"));
}

// The name (or unit) line of the sets after nccl-tests' columns, out-of-place then in-place each.
std::string extra_names(const TableColumns& columns, bool units) {
  std::string out;
  if (columns.groups)
    out += units ? fmt::format(" {:>9} {:>9}", "(GB/s)", "(GB/s)") : fmt::format(" {:>9} {:>9}", "aggbw", "aggbw");
  out += percentile_header(columns.percentiles, units, 2);
  if (columns.matrix) out += matrix_names(columns.matrix_bound, units) + matrix_names(columns.matrix_bound, units);
  if (columns.sendrecv_pattern) out += pattern_names(units) + pattern_names(units);
  if (columns.expected) out += expected_names(units) + expected_names(units);
  return out;
}

}  // namespace

std::string table_header(const std::string& op, int trial, int trials, const TableColumns& columns) {
  std::string out =
      trials > 1 ? fmt::format("#\n# {}  (trial {}/{})\n#\n", op, trial + 1, trials) : fmt::format("#\n# {}\n#\n", op);
  out += fmt::format("# {:>62}{:>40}", "out-of-place", "in-place");
  if (columns.groups) out += fmt::format("{:>22}", "all groups");
  if (!columns.percentiles.empty()) out += variant_titles(17 * columns.percentiles.size());  // a level: time, CI
  if (columns.matrix) out += variant_titles(kMatrixWidth + (columns.matrix_bound ? kBoundWidth : 0));
  if (columns.sendrecv_pattern) out += variant_titles(kPatternWidth);
  if (columns.expected) out += variant_titles(kExpectedWidth);
  out += "\n";
  out += fmt::format("# {:>10} {:>12} {:>8} {:>6} {:>5} {:>9} {:>7} {:>7} {:>6} {:>6} {:>9} {:>7} {:>7} {:>6} {:>6}",
                     "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "ci", "time",
                     "algbw", "busbw", "#wrong", "ci");
  out += extra_names(columns, false) + "\n";
  out += fmt::format("# {:>10} {:>12} {:>8} {:>6} {:>5} {:>9} {:>7} {:>7} {:>6} {:>6} {:>9} {:>7} {:>7} {:>6} {:>6}",
                     "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(±%)", "(us)", "(GB/s)",
                     "(GB/s)", "", "(±%)");
  out += extra_names(columns, true) + "\n";
  return out;
}

std::string p2p_table_header(const std::string& op, int trial, int trials, std::span<const double> percentiles) {
  std::string out =
      trials > 1 ? fmt::format("#\n# {}  (trial {}/{})\n#\n", op, trial + 1, trials) : fmt::format("#\n# {}\n#\n", op);
  out += fmt::format("# {:>10} {:>10} {:>10} {:>10} {:>6} {:>6}", "size", "time", "bandwidth", "msg rate", "#wrong",
                     "ci") +
         percentile_header(percentiles, false, 1) + "\n";
  out += fmt::format("# {:>10} {:>10} {:>10} {:>10} {:>6} {:>6}", "(B)", "(us)", "(GB/s)", "(Mmsg/s)", "", "(±%)") +
         percentile_header(percentiles, true, 1) + "\n";
  return out;
}

std::string p2p_table_row(const ResultRow& row, std::span<const double> percentiles) {
  const double t = row.time_us.median;
  const std::string time = t >= 1e4   ? fmt::format("{:.0f}", t)
                           : t >= 100 ? fmt::format("{:.1f}", t)
                                      : fmt::format("{:.2f}", t);
  const double ci = ci_percent(row);
  // One message per median time: messages per microsecond is millions per second.
  const std::string rate = t > 0 ? fmt::format("{:.3f}", 1.0 / t) : std::string("-");
  return fmt::format("  {:>10} {:>10} {:>10.2f} {:>10} {:>6} {:>6}", row.bytes, time, row.algbw_gbps, rate, row.wrong,
                     std::isnan(ci) ? std::string("-") : fmt::format("{:.1f}", ci)) +
         percentile_columns(&row, percentiles) + "\n";
}

namespace {

std::string variant_columns(const ResultRow* row) {
  if (row == nullptr) return fmt::format(" {:>9} {:>7} {:>7} {:>6} {:>6}", "-", "-", "-", "-", "-");
  const double t = row->time_us.median;
  const std::string time = t >= 1e4   ? fmt::format("{:.0f}", t)
                           : t >= 100 ? fmt::format("{:.1f}", t)
                                      : fmt::format("{:.2f}", t);
  const double ci = ci_percent(*row);
  return fmt::format(" {:>9} {:>7.2f} {:>7.2f} {:>6} {:>6}", time, row->algbw_gbps, row->busbw_gbps, row->wrong,
                     std::isnan(ci) ? std::string("-") : fmt::format("{:.1f}", ci));
}

// The aggregate busbw of all concurrent groups (row field groups.busbw_gbps_aggregate), or "-".
std::string aggregate_column(const ResultRow* row) {
  if (row == nullptr || !row->extra.contains("groups")) return fmt::format(" {:>9}", "-");
  const auto& g = row->extra["groups"];
  if (!g.is_object() || !g.contains("busbw_gbps_aggregate") || !g["busbw_gbps_aggregate"].is_number())
    return fmt::format(" {:>9}", "-");
  return fmt::format(" {:>9.2f}", g["busbw_gbps_aggregate"].get<double>());
}

}  // namespace

std::string table_row(const ResultRow* out_of_place, const ResultRow* in_place, const TableColumns& columns) {
  const ResultRow* any = out_of_place != nullptr ? out_of_place : in_place;
  if (any == nullptr) return "";
  std::string line =
      fmt::format("  {:>10} {:>12} {:>8} {:>6} {:>5}", any->bytes, any->count, any->dtype, any->redop, any->root) +
      variant_columns(out_of_place) + variant_columns(in_place);
  if (columns.groups) line += aggregate_column(out_of_place) + aggregate_column(in_place);
  if (!columns.percentiles.empty())
    line += percentile_columns(out_of_place, columns.percentiles) + percentile_columns(in_place, columns.percentiles);
  if (columns.matrix)
    line += matrix_columns(out_of_place, columns.matrix_bound) + matrix_columns(in_place, columns.matrix_bound);
  if (columns.sendrecv_pattern) line += pattern_columns(out_of_place) + pattern_columns(in_place);
  if (columns.expected) line += expected_column(out_of_place) + expected_column(in_place);
  return line + "\n";
}

}  // namespace ccbench::report
