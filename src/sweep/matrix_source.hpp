// The traffic matrix of `run`'s matrix ops (alltoallv, moe_*): from --matrix FILE.csv or routed
// by --moe SPEC with the run's --seed, and its description in every row, enough to get the same
// matrix again (docs/method.md, "alltoallv and MoE").
#pragma once

#include <nlohmann/json.hpp>

#include "core/traffic_matrix.hpp"
#include "sweep/run_config.hpp"

namespace ccbench {

struct MatrixSource {
  TrafficMatrix matrix;   // alltoallv's matrix, or the router's dispatch (moe_*)
  nlohmann::json source;  // {"file", "sha256"} or {"moe", "routing", "seed"} (+ the hot fraction it drew)
};

// For `op` (alltoallv takes --matrix, moe_* --moe) on a communicator of `nranks` ranks. Throws
// UsageError naming the file (line, column) or --moe.
MatrixSource matrix_source(const RunConfig& config, Op op, int nranks);

}  // namespace ccbench
