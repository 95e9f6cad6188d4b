#include "sweep/session_flags.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>

#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/sizes.hpp"

namespace ccbench {

void add_shared_flags(CLI::App& app, RunConfig& config, SharedFlagText& text, std::string_view unit) {
  app.add_option("-b,--min-bytes", text.min_bytes, "smallest size (K/M/G/T = powers of 1024)")
      ->default_str(text.min_bytes);
  app.add_option("-e,--max-bytes", text.max_bytes, "largest size")->default_str(text.max_bytes);
  app.add_option("-f,--step-factor", text.step_factor, "geometric step")->default_str(text.step_factor);
  app.add_option("-i,--step-bytes", text.step_bytes, "arithmetic step (wins over -f)")->default_str(text.step_bytes);
  add_warmup_flag(app, config.warmup, "warm-up iterations per size")->default_val(config.warmup);
  add_iters_flag(app, text.iters, "samples per size, or auto (until --target-ci)")->default_str(text.iters);
  app.add_option("--target-ci", text.target_ci, "-n auto: stop when the median's 95% CI is within this fraction")
      ->default_str(text.target_ci);
  add_max_time_per_size_flag(app, text.max_time_per_size, "-n auto: seconds of sampling per size")
      ->default_str(text.max_time_per_size);
  app.add_option("--trials", config.trials, "passes over the whole plan, interleaved")->default_val(config.trials);
  app.add_option("-c,--check", text.check, "verify every output element (0|1)")->default_str(text.check);
  app.add_option("--batch", config.batch, fmt::format("{}s per sample (0 = from the warm-up time)", unit))
      ->default_val(config.batch);
  app.add_option("--seed", config.seed, "seed of the data pattern")->default_val(config.seed);
  app.add_option("--label", config.label, "free text recorded in the result file");
  app.add_option("--instance-type", config.instance_type, "override the DMI product name");
  app.add_option("-J,--json", config.json_path, "result file (a .jsonl stream is written beside it)");
  add_timeout_flag(
      app, text.timeout,
      fmt::format("seconds one {} may take before the run aborts (exit 3); 0 = no watchdog, at most {:.0f}", unit,
                  kMaxTimeoutS))
      ->default_str(text.timeout);
  app.add_option("--require-path", text.require_path,
                 fmt::format("fail closed (exit 6) unless the bytes are proven to take this path: {} "
                             "(docs/path-proof.md)",
                             proof::kRequirePathValues));
  app.add_option("--require-rails", config.require_rails,
                 "with --require-path efa: fail unless at least this many EFA devices per node carried traffic")
      ->default_val(config.require_rails);
  app.add_option("--progress", config.progress, "auto | always | never (a line on stderr per size)")
      ->default_str(config.progress);
}

void apply_shared_flags(RunConfig& config, const SharedFlagText& text) {
  config.sizes.min_bytes = bytes_flag("-b/--min-bytes", text.min_bytes);
  config.sizes.max_bytes = bytes_flag("-e/--max-bytes", text.max_bytes);
  config.sizes.step_bytes = bytes_flag("-i/--step-bytes", text.step_bytes);
  config.sizes.step_factor = parse_finite(text.step_factor, "-f/--step-factor");
  if (config.sizes.step_bytes == 0 && !(config.sizes.step_factor > 1.0) &&
      config.sizes.min_bytes != config.sizes.max_bytes) {
    throw UsageError("-f/--step-factor must be greater than 1 (got " + text.step_factor + ")");
  }
  config.max_time_per_size_s = parse_max_time_per_size_flag(text.max_time_per_size);
  config.timeout_s = parse_timeout_flag(text.timeout);
  apply_sampling_options(config, text.iters, text.target_ci, text.check);
  if (!text.require_path.empty()) config.require_path = proof::parse_required_path(text.require_path);
  if (config.require_rails < 0 || config.require_rails > 1024) {
    throw UsageError(fmt::format("--require-rails: expected 0..1024 devices per node, got {}", config.require_rails));
  }
  if (config.require_rails > 0 && (!config.require_path || config.require_path->kind != proof::PathKind::efa)) {
    throw UsageError("--require-rails: needs --require-path efa (rails are EFA devices)");
  }
  if (config.progress != "auto" && config.progress != "always" && config.progress != "never") {
    throw UsageError("--progress: expected auto, always or never, got '" + config.progress + "'");
  }
}

}  // namespace ccbench
