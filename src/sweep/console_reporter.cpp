#include "sweep/console_reporter.hpp"

#include <unistd.h>

#include "report/console_table.hpp"

namespace ccbench {

bool show_progress(const RunConfig& config) {
  return config.progress == "always" || (config.progress == "auto" && ::isatty(STDERR_FILENO));
}

ConsoleReporter::ConsoleReporter(const Plan& plan, const RunConfig& config, std::string title_suffix, std::FILE* table,
                                 std::FILE* progress)
    : progress_(plan.cases_per_trial * static_cast<std::size_t>(config.trials), config.trials),
      trials_(config.trials),
      title_suffix_(std::move(title_suffix)),
      table_(table),
      progress_out_(progress),
      show_progress_(show_progress(config)),
      groups_(config.groups.kind != groups::Kind::none) {}

void ConsoleReporter::on_op_begin(int trial, Op op) {
  std::fputs(report::table_header(std::string(name(op)) + title_suffix_, trial, trials_, groups_).c_str(), table_);
  std::fflush(table_);
}

void ConsoleReporter::on_result(const ResultRow& row) {
  if (!show_progress_) return;
  std::fputs(progress_.on_result(row).c_str(), progress_out_);
  std::fflush(progress_out_);
}

void ConsoleReporter::on_size_done(int, Op, std::span<const ResultRow> rows) {
  const ResultRow* out_of_place = nullptr;
  const ResultRow* in_place = nullptr;
  for (const auto& row : rows) (row.in_place ? in_place : out_of_place) = &row;
  std::fputs(report::table_row(out_of_place, in_place, groups_).c_str(), table_);
  std::fflush(table_);
}

}  // namespace ccbench
