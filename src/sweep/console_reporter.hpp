// Rank 0's console during a measuring command: the nccl-tests-style table on stdout (one block per
// op, one line per size with the out-of-place and in-place variants side by side) and the
// progress line on stderr. The one console reporter of `ccbench run`, `ccbench fabric` and the
// commands built on the run session.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "report/console_table.hpp"
#include "report/progress_line.hpp"
#include "sweep/engine.hpp"

namespace ccbench {

class ConsoleReporter final : public SweepObserver {
 public:
  // `title_suffix` follows the op's name in each block's title (" over shm" for fabric).
  // `point_to_point`: the transport tests' own table (report::p2p_table_row), not the collective one.
  ConsoleReporter(const Plan& plan, const RunConfig& config, std::string title_suffix = "", std::FILE* table = stdout,
                  std::FILE* progress = stderr, bool point_to_point = false);

  void on_op_begin(int trial, Op op) override;
  void on_result(const ResultRow& row) override;
  void on_size_done(int trial, Op op, std::span<const ResultRow> rows) override;

 private:
  report::ProgressLine progress_;
  int trials_;
  std::string title_suffix_;
  std::FILE* table_;
  std::FILE* progress_out_;
  bool show_progress_ = false;
  std::vector<double> percentiles_;  // --percentiles: each level's columns
  // Per op, the column sets after nccl-tests' (--groups, --percentiles, a matrix op's, a patterned
  // sendrecv's): decided from the plan before the op's first row, as `report` decides them from rows.
  std::map<Op, report::TableColumns> columns_;
  bool point_to_point_ = false;
};

// Whether the progress line is shown: --progress always, or auto when stderr is a terminal.
bool show_progress(const RunConfig& config);

}  // namespace ccbench
