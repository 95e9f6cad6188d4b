#include "trace/summary.hpp"

#include <bit>

namespace ccbench::trace {

std::vector<StepSummary> summarise(const Trace& trace) {
  std::map<std::optional<std::int64_t>, StepSummary> steps;
  for (const auto& rank : trace.ranks) {
    for (const auto& call : rank.calls) {
      StepSummary& s = steps[call.step];
      s.step = call.step;
      ++s.calls_per_rank[rank.rank];
      const std::uint64_t bytes = send_bytes(call);
      auto& totals = s.by_op_group[{call.op, call.group}];
      ++totals.calls;
      totals.bytes += bytes;
      s.bytes += bytes;
      ++s.size_histogram[bytes == 0 ? -1 : static_cast<int>(std::bit_width(bytes)) - 1];
    }
  }
  std::vector<StepSummary> out;
  for (auto& [step, s] : steps) {
    for (const auto& rank : trace.ranks) s.calls_per_rank.try_emplace(rank.rank, 0);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace ccbench::trace
