#include "report/console_table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ccbench::report {

double ci_percent(const ResultRow& row) {
  const auto& t = row.time_us;
  if (!(t.median > 0) || row.samples_kind != "raw") return 0.0;
  return 100.0 * std::max(t.median - t.ci95_lo, t.ci95_hi - t.median) / t.median;
}

std::string table_header(const std::string& op, int trial, int trials) {
  std::string out =
      trials > 1 ? fmt::format("#\n# {}  (trial {}/{})\n#\n", op, trial + 1, trials) : fmt::format("#\n# {}\n#\n", op);
  out += fmt::format("# {:>62}{:>40}\n", "out-of-place", "in-place");
  out += fmt::format("# {:>10} {:>12} {:>8} {:>6} {:>5} {:>9} {:>7} {:>7} {:>6} {:>6} {:>9} {:>7} {:>7} {:>6} {:>6}\n",
                     "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "ci", "time",
                     "algbw", "busbw", "#wrong", "ci");
  out += fmt::format("# {:>10} {:>12} {:>8} {:>6} {:>5} {:>9} {:>7} {:>7} {:>6} {:>6} {:>9} {:>7} {:>7} {:>6} {:>6}\n",
                     "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(±%)", "(us)", "(GB/s)",
                     "(GB/s)", "", "(±%)");
  return out;
}

namespace {

std::string variant_columns(const ResultRow* row) {
  if (row == nullptr) return fmt::format(" {:>9} {:>7} {:>7} {:>6} {:>6}", "-", "-", "-", "-", "-");
  const double t = row->time_us.median;
  const std::string time = t >= 1e4   ? fmt::format("{:.0f}", t)
                           : t >= 100 ? fmt::format("{:.1f}", t)
                                      : fmt::format("{:.2f}", t);
  return fmt::format(" {:>9} {:>7.2f} {:>7.2f} {:>6} {:>6.1f}", time, row->algbw_gbps, row->busbw_gbps, row->wrong,
                     ci_percent(*row));
}

}  // namespace

std::string table_row(const ResultRow* out_of_place, const ResultRow* in_place) {
  const ResultRow* any = out_of_place != nullptr ? out_of_place : in_place;
  if (any == nullptr) return "";
  return fmt::format("  {:>10} {:>12} {:>8} {:>6} {:>5}", any->bytes, any->count, any->dtype, any->redop, any->root) +
         variant_columns(out_of_place) + variant_columns(in_place) + "\n";
}

}  // namespace ccbench::report
