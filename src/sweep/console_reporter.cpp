#include "sweep/console_reporter.hpp"

#include <unistd.h>

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

// Each op's table columns. A case with a matrix writes the row's `matrix` (with bound_us when
// --link-gbps is given), one that posts pattern blocks its `sendrecv_pattern` (sweep/engine.cpp):
// the header, printed before any row, shows the columns its rows will fill.
std::map<Op, report::TableColumns> columns_of(const Plan& plan, const RunConfig& config) {
  report::TableColumns common;
  common.groups = config.groups.kind != groups::Kind::none;
  common.percentiles = config.percentiles;
  std::map<Op, report::TableColumns> out;
  for (const auto& op : plan.ops) {
    report::TableColumns& columns = out.try_emplace(op.op, common).first->second;
    for (const auto& size : op.sizes) {
      for (const auto& c : size.variants) {
        columns.matrix = columns.matrix || c.matrix != nullptr;
        columns.matrix_bound = columns.matrix && config.link_gbps > 0;
        columns.sendrecv_pattern = columns.sendrecv_pattern || c.posts_blocks();
      }
    }
  }
  return out;
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
      percentiles_(config.percentiles),
      columns_(columns_of(plan, config)),
      point_to_point_(point_to_point) {}

void ConsoleReporter::on_op_begin(int trial, Op op) {
  const std::string title = std::string(name(op)) + title_suffix_;
  std::fputs((point_to_point_ ? report::p2p_table_header(title, trial, trials_, percentiles_)
                              : report::table_header(title, trial, trials_, columns_[op]))
                 .c_str(),
             table_);
  std::fflush(table_);
}

void ConsoleReporter::on_result(const ResultRow& row) {
  if (!show_progress_) return;
  std::fputs(progress_.on_result(row).c_str(), progress_out_);
  std::fflush(progress_out_);
}

void ConsoleReporter::on_size_done(int, Op op, std::span<const ResultRow> rows) {
  if (point_to_point_) {
    for (const auto& row : rows) std::fputs(report::p2p_table_row(row, percentiles_).c_str(), table_);
    std::fflush(table_);
    return;
  }
  const ResultRow* out_of_place = nullptr;
  const ResultRow* in_place = nullptr;
  for (const auto& row : rows) (row.in_place ? in_place : out_of_place) = &row;
  std::fputs(report::table_row(out_of_place, in_place, columns_[op]).c_str(), table_);
  std::fflush(table_);
}

}  // namespace ccbench
