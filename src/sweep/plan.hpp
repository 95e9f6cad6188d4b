// The plan: every (op, size, in-place variant) a trial measures, with element counts resolved, and
// the buffer sizes the largest case needs (allocated once, checked against memory before measuring).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "sweep/run_config.hpp"

namespace ccbench {

struct PlannedSize {
  std::uint64_t nominal_bytes = 0;
  std::vector<CaseSpec> variants;  // out-of-place first, then in-place (as asked)
};

struct PlannedOp {
  Op op;
  std::vector<PlannedSize> sizes;
};

struct Skip {
  std::string what;    // "allgather 8 bytes", "allreduce (all sizes)"
  std::string reason;
};

struct Plan {
  std::vector<PlannedOp> ops;
  std::vector<Skip> skipped;
  std::uint64_t send_bytes = 0;  // per rank, for the largest case
  std::uint64_t recv_bytes = 0;
  std::size_t cases_per_trial = 0;
};

// Throws UsageError when nothing is left to measure.
Plan make_plan(const RunConfig& config, const Backend& backend, int nranks, int rank);

}  // namespace ccbench
