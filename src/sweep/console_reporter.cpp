#include "sweep/console_reporter.hpp"

#include <unistd.h>

#include "report/console_table.hpp"

namespace ccbench {

bool show_progress(const RunConfig& config) {
  return config.progress == "always" || (config.progress == "auto" && ::isatty(STDERR_FILENO));
}

namespace {

// Every case of every trial, weighted by its bytes (report::progress_weight): the time left follows them.
double progress_weight_of(const Plan& plan, int trials) {
  double per_trial = 0;
  for (const auto& op : plan.ops) {
    for (const auto& size : op.sizes) {
      for (const auto& variant : size.variants) per_trial += report::progress_weight(variant.layout.bytes);
    }
  }
  return per_trial * trials;
}

}  // namespace

ConsoleReporter::ConsoleReporter(const Plan& plan, const RunConfig& config, std::string title_suffix, std::FILE* table,
                                 std::FILE* progress, bool point_to_point)
    : progress_(plan.cases_per_trial * static_cast<std::size_t>(config.trials), progress_weight_of(plan, config.trials),
                config.trials),
      trials_(config.trials),
      title_suffix_(std::move(title_suffix)),
      table_(table),
      progress_out_(progress),
      show_progress_(show_progress(config)),
      groups_(config.groups.kind != groups::Kind::none),
      percentiles_(config.percentiles),
      point_to_point_(point_to_point) {}

void ConsoleReporter::on_op_begin(int trial, Op op) {
  const std::string title = std::string(name(op)) + title_suffix_;
  std::fputs((point_to_point_ ? report::p2p_table_header(title, trial, trials_, percentiles_)
                              : report::table_header(title, trial, trials_, groups_, percentiles_))
                 .c_str(),
             table_);
  std::fflush(table_);
}

void ConsoleReporter::on_result(const ResultRow& row) {
  if (!show_progress_) return;
  std::fputs(progress_.on_result(row).c_str(), progress_out_);
  std::fflush(progress_out_);
}

void ConsoleReporter::on_size_done(int, Op, std::span<const ResultRow> rows) {
  if (point_to_point_) {
    for (const auto& row : rows) std::fputs(report::p2p_table_row(row, percentiles_).c_str(), table_);
    std::fflush(table_);
    return;
  }
  const ResultRow* out_of_place = nullptr;
  const ResultRow* in_place = nullptr;
  for (const auto& row : rows) (row.in_place ? in_place : out_of_place) = &row;
  std::fputs(report::table_row(out_of_place, in_place, groups_, percentiles_).c_str(), table_);
  std::fflush(table_);
}

}  // namespace ccbench
