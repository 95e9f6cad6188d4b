// The progress line on stderr during a long sweep: what finished, elapsed time and time left.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/result.hpp"

namespace ccbench::report {

// What one case is expected to cost in the estimate of the time left, in bytes: its own bytes plus
// a fixed cost per case (barriers, warm-up, the data check, the minimum samples) worth
// kCaseOverheadBytes. Counting cases alone said "~5 s left" at the start of a 19 s sweep, whose
// largest sizes take most of the time; bytes alone would call the small sizes free. 4 MiB: the
// quick sweep's cases on 2 ranks over shared memory fit 0.18 s + 0.05 s/GB, 3.6 MiB of bytes per
// case's fixed cost.
inline constexpr std::uint64_t kCaseOverheadBytes = 4ULL << 20;
double progress_weight(std::uint64_t bytes);

class ProgressLine {
 public:
  // `total_weight`: the sum of progress_weight(bytes) over every case of every trial.
  ProgressLine(std::size_t total_cases, double total_weight, int trials);
  // One line for a finished result: "[ 37/144] allreduce 1M in-place trial 1/2: 114.2 us ±0.8%
  // (n=40, batch 1) | 12 s elapsed, ~35 s left".
  std::string on_result(const ResultRow& row);
  // The same at a given time since the start (tests).
  std::string on_result(const ResultRow& row, double elapsed_s);

 private:
  std::size_t total_;
  std::size_t done_ = 0;
  double total_weight_;
  double done_weight_ = 0;
  int trials_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ccbench::report
