#include "report/progress_line.hpp"

#include <fmt/format.h>

#include "core/sizes.hpp"
#include "report/console_table.hpp"

namespace ccbench::report {

ProgressLine::ProgressLine(std::size_t total_cases, int trials)
    : total_(total_cases), trials_(trials), start_(std::chrono::steady_clock::now()) {}

std::string ProgressLine::on_result(const ResultRow& row) {
  ++done_;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // Time left assumes the remaining cases cost what the finished ones did on average; sizes grow,
  // so early estimates are low, but they converge as the sweep goes.
  const double left = done_ == 0 ? 0.0 : elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
  const int width = static_cast<int>(std::to_string(total_).size());
  return fmt::format(
      "[{:>{}}/{}] {} {} {}{}: {:.2f} us ±{:.1f}% (n={}, batch {}{}) | {:.0f} s elapsed, ~{:.0f} s left\n", done_,
      width, total_, row.op, format_bytes(row.bytes), row.in_place ? "in-place" : "out-of-place",
      trials_ > 1 ? fmt::format(" trial {}/{}", row.trial + 1, trials_) : std::string(), row.time_us.median,
      ci_percent(row), row.samples_us.size(), row.batch, row.ci_target_met ? "" : ", CI target not met", elapsed, left);
}

}  // namespace ccbench::report
