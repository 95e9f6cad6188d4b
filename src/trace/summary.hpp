// What `ccbench trace show` prints first: per step, the calls per op and group, their bytes, the
// size histogram and the step's call count per rank. Calls without a step marker form one
// unmarked step.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trace/trace.hpp"

namespace ccbench::trace {

struct OpGroupTotals {
  std::uint64_t calls = 0;  // over every rank
  std::uint64_t bytes = 0;  // send buffers, over every rank
};

struct StepSummary {
  std::optional<std::int64_t> step;             // nullopt: calls with no step marker
  std::map<int, std::uint64_t> calls_per_rank;  // world rank -> its calls in this step
  std::map<std::pair<CallOp, std::string>, OpGroupTotals> by_op_group;
  // Calls (over every rank) by size class: k holds send buffers of [2^k, 2^(k+1)) bytes, -1 holds 0 bytes.
  std::map<int, std::uint64_t> size_histogram;
  std::uint64_t bytes = 0;
};

std::vector<StepSummary> summarise(const Trace& trace);

}  // namespace ccbench::trace
