#include "fabric/fabric_options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <string_view>

#include "core/error.hpp"
#include "core/numbers.hpp"

namespace ccbench::fabric {
namespace {

std::uint64_t bytes_flag(const char* flag, const std::string& text) {
  try {
    return parse_bytes(text);
  } catch (const UsageError& e) {
    throw UsageError(std::string(flag) + ": " + e.what());
  }
}

}  // namespace

std::string_view name(MemoryKind kind) { return kind == MemoryKind::cuda ? "cuda" : "host"; }

std::vector<Op> parse_fabric_ops(const std::string& text) {
  std::vector<Op> ops;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) continue;
    const std::string full = item.rfind("fabric_", 0) == 0 ? item : "fabric_" + item;
    const auto op = parse_op(full);
    if (!op || info(*op).is_collective) {
      throw UsageError("--ops: unknown fabric test '" + item + "' (expected pingpong, bw, bibw, write, read)");
    }
    if (std::ranges::find(ops, *op) == ops.end()) ops.push_back(*op);
  }
  if (ops.empty()) throw UsageError("--ops: empty list (expected pingpong, bw, bibw, write, read)");
  return ops;
}

bool wants_provider_list(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--list-providers") return true;
  }
  return false;
}

bool parse_fabric_options(int argc, char** argv, FabricConfig& config, bool print_help) {
  RunConfig& run = config.run;
  run.backend = "libfabric";
  run.dtype = DType::uint8;
  run.redop = RedOp::none;
  run.in_place = InPlaceMode::no;
  run.sizes.min_bytes = 8;
  run.sizes.max_bytes = 4ULL << 20;

  CLI::App app{"ccbench fabric: libfabric point-to-point latency and bandwidth (mpirun -np 2)", "ccbench fabric"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.get_formatter()->column_width(36);

  std::string ops = "pingpong,bw", min_bytes = "8", max_bytes = "4M", step_bytes = "0", iters = "auto",
              target_ci = "0.01", check = "1", memory = "host";
  double step_factor = 2.0;
  app.add_option("--ops", ops, "comma list: pingpong,bw,bibw,write,read")->default_str(ops);
  app.add_option("-p,--provider", config.provider,
                 "libfabric provider (efa, shm, tcp, ...); default: efa, else shm on one host, else tcp");
  app.add_option("-D,--domain", config.domain, "libfabric domain (NIC), default: the provider's first");
  app.add_flag("--list-providers", config.list_providers, "print the providers fi_getinfo offers and exit");
  app.add_option("--window", config.window, "outstanding operations of bw, bibw, write, read")->default_val(64);
  app.add_option("--memory", memory, "host | cuda (GPU buffers through FI_HMEM)")->default_str("host");
  app.add_option("-b,--min-bytes", min_bytes, "smallest message (K/M/G = powers of 1024)")->default_str("8");
  app.add_option("-e,--max-bytes", max_bytes, "largest message")->default_str("4M");
  const CLI::Validator finite(&finite_number_check, "NUMBER");  // nan and inf are exit 2
  app.add_option("-f,--step-factor", step_factor, "geometric step")->default_val(2.0)->check(finite);
  app.add_option("-i,--step-bytes", step_bytes, "arithmetic step (wins over -f)")->default_str("0");
  app.add_option("-w,--warmup", run.warmup, "warm-up operations per size")->default_val(5);
  app.add_option("-n,--iters", iters, "samples per size, or auto (until --target-ci)")->default_str("auto");
  app.add_option("--target-ci", target_ci, "-n auto: stop when the median's 95% CI is within this fraction")
      ->default_str("0.01");
  app.add_option("--max-time-per-size", run.max_time_per_size_s, "-n auto: seconds of sampling per size")
      ->default_val(1.0)
      ->check(finite);
  app.add_option("--trials", run.trials, "passes over the whole plan, interleaved")->default_val(1);
  app.add_option("-c,--check", check, "verify every received payload (0|1)")->default_str("1");
  app.add_option("--batch", run.batch, "operations per sample (0 = from the warm-up time)")->default_val(0);
  app.add_option("--seed", run.seed, "seed of the data pattern")->default_val(1);
  app.add_option("--label", run.label, "free text recorded in the result file");
  app.add_option("--instance-type", run.instance_type, "override the DMI product name");
  app.add_option("-J,--json", run.json_path, "result file (a .jsonl stream is written beside it)");
  app.add_option("-T,--timeout", run.timeout_s, "seconds one operation may take before the run aborts (exit 3)")
      ->default_val(300)
      ->check(finite);
  app.add_option("--progress", run.progress, "auto | always | never (a line on stderr per size)")->default_str("auto");

  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) args.emplace_back(argv[i]);  // CLI11 consumes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    if (print_help) std::cout << app.help();
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }

  run.ops = parse_fabric_ops(ops);
  run.sizes.min_bytes = bytes_flag("-b/--min-bytes", min_bytes);
  run.sizes.max_bytes = bytes_flag("-e/--max-bytes", max_bytes);
  run.sizes.step_bytes = bytes_flag("-i/--step-bytes", step_bytes);
  run.sizes.step_factor = step_factor;
  if (run.sizes.min_bytes == 0) throw UsageError("-b/--min-bytes must be at least 1");
  if (run.sizes.step_bytes == 0 && !(step_factor > 1.0) && run.sizes.min_bytes != run.sizes.max_bytes) {
    throw UsageError("-f/--step-factor must be greater than 1 (got " + std::to_string(step_factor) + ")");
  }
  apply_sampling_options(run, iters, target_ci, check);
  if (config.window < 1 || config.window > 4096) throw UsageError("--window must be in 1..4096");
  if (memory == "host") {
    config.memory = MemoryKind::host;
  } else if (memory == "cuda") {
    config.memory = MemoryKind::cuda;
  } else {
    throw UsageError("--memory: expected host or cuda, got '" + memory + "'");
  }
  if (run.progress != "auto" && run.progress != "always" && run.progress != "never") {
    throw UsageError("--progress: expected auto, always or never, got '" + run.progress + "'");
  }
  return true;
}

}  // namespace ccbench::fabric
