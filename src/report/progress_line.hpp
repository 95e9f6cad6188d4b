// The progress line on stderr during a long sweep: what finished, elapsed time and time left.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "core/result.hpp"

namespace ccbench::report {

class ProgressLine {
 public:
  ProgressLine(std::size_t total_cases, int trials);
  // One line for a finished result: "[ 37/144] allreduce 1M in-place trial 1/2: 114.2 us ±0.8%
  // (n=40, batch 1) | 12 s elapsed, ~35 s left".
  std::string on_result(const ResultRow& row);

 private:
  std::size_t total_;
  std::size_t done_ = 0;
  int trials_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ccbench::report
