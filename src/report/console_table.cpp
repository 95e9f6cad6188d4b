#include "report/console_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

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

std::string table_header(const std::string& op, int trial, int trials, bool groups) {
  std::string out =
      trials > 1 ? fmt::format("#\n# {}  (trial {}/{})\n#\n", op, trial + 1, trials) : fmt::format("#\n# {}\n#\n", op);
  out += fmt::format("# {:>62}{:>40}", "out-of-place", "in-place");
  out += groups ? fmt::format("{:>22}\n", "all groups") : "\n";
  out += fmt::format("# {:>10} {:>12} {:>8} {:>6} {:>5} {:>9} {:>7} {:>7} {:>6} {:>6} {:>9} {:>7} {:>7} {:>6} {:>6}",
                     "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "ci", "time",
                     "algbw", "busbw", "#wrong", "ci");
  out += groups ? fmt::format(" {:>9} {:>9}\n", "aggbw", "aggbw") : "\n";
  out += fmt::format("# {:>10} {:>12} {:>8} {:>6} {:>5} {:>9} {:>7} {:>7} {:>6} {:>6} {:>9} {:>7} {:>7} {:>6} {:>6}",
                     "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(±%)", "(us)", "(GB/s)",
                     "(GB/s)", "", "(±%)");
  out += groups ? fmt::format(" {:>9} {:>9}\n", "(GB/s)", "(GB/s)") : "\n";
  return out;
}

std::string p2p_table_header(const std::string& op, int trial, int trials) {
  std::string out =
      trials > 1 ? fmt::format("#\n# {}  (trial {}/{})\n#\n", op, trial + 1, trials) : fmt::format("#\n# {}\n#\n", op);
  out += fmt::format("# {:>10} {:>10} {:>10} {:>10} {:>6} {:>6}\n", "size", "time", "bandwidth", "msg rate", "#wrong",
                     "ci");
  out += fmt::format("# {:>10} {:>10} {:>10} {:>10} {:>6} {:>6}\n", "(B)", "(us)", "(GB/s)", "(Mmsg/s)", "", "(±%)");
  return out;
}

std::string p2p_table_row(const ResultRow& row) {
  const double t = row.time_us.median;
  const std::string time = t >= 1e4 ? fmt::format("{:.0f}", t) : t >= 100 ? fmt::format("{:.1f}", t) : fmt::format("{:.2f}", t);
  const double ci = ci_percent(row);
  // One message per median time: messages per microsecond is millions per second.
  const std::string rate = t > 0 ? fmt::format("{:.3f}", 1.0 / t) : std::string("-");
  return fmt::format("  {:>10} {:>10} {:>10.2f} {:>10} {:>6} {:>6}\n", row.bytes, time, row.algbw_gbps, rate, row.wrong,
                     std::isnan(ci) ? std::string("-") : fmt::format("{:.1f}", ci));
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

std::string table_row(const ResultRow* out_of_place, const ResultRow* in_place, bool groups) {
  const ResultRow* any = out_of_place != nullptr ? out_of_place : in_place;
  if (any == nullptr) return "";
  std::string line =
      fmt::format("  {:>10} {:>12} {:>8} {:>6} {:>5}", any->bytes, any->count, any->dtype, any->redop, any->root) +
      variant_columns(out_of_place) + variant_columns(in_place);
  if (groups) line += aggregate_column(out_of_place) + aggregate_column(in_place);
  return line + "\n";
}

}  // namespace ccbench::report
