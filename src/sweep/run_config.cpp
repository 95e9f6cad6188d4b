#include "sweep/run_config.hpp"

#include <stdexcept>

#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/sampling.hpp"
#include "sweep/run_flags.hpp"

namespace ccbench {

std::string_view name(InPlaceMode mode) {
  switch (mode) {
    case InPlaceMode::no:
      return "no";
    case InPlaceMode::yes:
      return "yes";
    default:
      return "both";
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
  nlohmann::json out = {
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
      {"min_samples", c.min_samples},
      {"check", c.check},
      {"in_place", name(c.in_place)},
      {"seed", c.seed},
      {"timeout_s", c.timeout_s},
      {"nccl_path", c.nccl_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.nccl_path)},
      {"graph_launches", c.graph_launches},
      {"registration", name(c.registration)},
  };
  // Only when given, so a run without matrix ops records what it always did.
  if (!c.matrix_path.empty()) out["matrix"] = c.matrix_path;
  if (c.require_path) out["require_path"] = proof::to_string(*c.require_path);
  if (c.require_rails > 0) out["require_rails"] = c.require_rails;
  if (!c.moe.empty()) out["moe"] = c.moe;
  if (c.sendrecv_pattern != SendRecvPattern::ring || c.block_bytes > 0) {
    out["pattern"] = name(c.sendrecv_pattern);
    out["peer_group"] = c.peer_group;
    out["block_bytes"] = c.block_bytes;
  }
  if (!c.percentiles.empty()) {
    out["percentiles"] = c.percentiles;
    out["timing"]["batch_rule"] = "--percentiles: one op a sample (per-iteration times)";
  }
  return out;
}

void apply_sampling_options(RunConfig& config, const std::string& iters, const std::string& target_ci,
                            const std::string& check) {
  config.iters = parse_iters_flag(iters);
  config.target_ci = parse_fraction(target_ci, "--target-ci");
  if (!(config.target_ci > 0 && config.target_ci < 1))
    throw UsageError("--target-ci must be in (0, 1), e.g. 0.01 or 1%");
  if (!(config.max_time_per_size_s > 0)) throw UsageError("--max-time-per-size must be positive");
  check_warmup_flag(config.warmup);
  if (config.trials < 1) throw UsageError("--trials must be at least 1");
  if (config.batch < 0) throw UsageError("--batch must not be negative");
  if (config.timeout_s < 0) throw UsageError("-T/--timeout must not be negative (0 disables the watchdog)");
  if (check != "0" && check != "1") throw UsageError("-c/--check: expected 0 or 1, got '" + check + "'");
  config.check = check == "1";
}

}  // namespace ccbench
