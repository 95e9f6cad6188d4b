#include "sweep/run_config.hpp"

namespace ccbench {

std::string_view name(InPlaceMode mode) {
  switch (mode) {
    case InPlaceMode::no: return "no";
    case InPlaceMode::yes: return "yes";
    default: return "both";
  }
}

std::string_view name(TimingMethod method) { return method == TimingMethod::ccbench ? "ccbench" : "nccl-tests"; }

nlohmann::json to_json(const RunConfig& c) {
  nlohmann::json ops = nlohmann::json::array();
  for (Op op : c.ops) ops.push_back(name(op));
  const bool nccl_tests = c.timing == TimingMethod::nccl_tests;
  nlohmann::json timing = {
      {"method", name(c.timing)},
      {"sample", nccl_tests ? "batch time / batch on each rank, then the mean over ranks (nccl-tests)"
                            : "batch time / batch after a barrier, then the maximum over ranks"},
      {"aggregation", nccl_tests ? "mean" : "max"},
      {"synchronisation", "MPI_Barrier before each sample"},
      {"batch", c.batch == 0 ? nlohmann::json("auto") : nlohmann::json(c.batch)},
      {"batch_rule", "auto: ops per sample so a batch lasts at least 100 us (1..1024), from the warm-up time"},
      {"statistic", "median; 95% CI from order statistics (exact binomial)"},
  };
  return {
      {"backend", c.backend},
      {"ops", ops},
      {"dtype", name(c.dtype)},
      {"redop", name(c.redop)},
      {"root", c.root},
      {"min_bytes", c.sizes.min_bytes},
      {"max_bytes", c.sizes.max_bytes},
      {"step_factor", c.sizes.step_factor},
      {"step_bytes", c.sizes.step_bytes},
      {"timing", timing},
      {"iters", c.iters ? nlohmann::json(*c.iters) : nlohmann::json("auto")},
      {"warmup", c.warmup},
      {"trials", c.trials},
      {"target_ci", c.target_ci},
      {"max_time_per_size_s", c.max_time_per_size_s},
      {"min_samples", 10},
      {"check", c.check},
      {"in_place", name(c.in_place)},
      {"seed", c.seed},
      {"timeout_s", c.timeout_s},
      {"nccl_path", c.nccl_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.nccl_path)},
      {"graph_launches", c.graph_launches},
  };
}

}  // namespace ccbench
