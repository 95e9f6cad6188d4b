#include "report/progress_line.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/sizes.hpp"
#include "report/console_table.hpp"

namespace ccbench::report {

double progress_weight(std::uint64_t bytes) { return static_cast<double>(bytes + kCaseOverheadBytes); }

ProgressLine::ProgressLine(std::size_t total_cases, double total_weight, int trials)
    : total_(total_cases), total_weight_(total_weight), trials_(trials), start_(std::chrono::steady_clock::now()) {}

std::string ProgressLine::on_result(const ResultRow& row) {
  return on_result(row, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
}

std::string ProgressLine::on_result(const ResultRow& row, double elapsed_s) {
  ++done_;
  done_weight_ += progress_weight(row.bytes);
  // Time left: the remaining cases cost what the finished ones did per unit of weight (bytes plus a
  // set-up cost per case), so the largest sizes, at the end of each op, count for what they take.
  const double left_weight = std::max(0.0, total_weight_ - done_weight_);
  const double left = done_ >= total_ || done_weight_ <= 0 ? 0.0 : elapsed_s / done_weight_ * left_weight;
  const int width = static_cast<int>(std::to_string(total_).size());
  return fmt::format(
      "[{:>{}}/{}] {} {} {}{}: {:.2f} us ±{:.1f}% (n={}, batch {}{}) | {:.0f} s elapsed, ~{:.0f} s left\n", done_,
      width, total_, row.op, format_bytes(row.bytes), row.in_place ? "in-place" : "out-of-place",
      trials_ > 1 ? fmt::format(" trial {}/{}", row.trial + 1, trials_) : std::string(), row.time_us.median,
      ci_percent(row), row.samples_us.size(), row.batch, row.ci_target_met ? "" : ", CI target not met", elapsed_s,
      left);
}

}  // namespace ccbench::report
