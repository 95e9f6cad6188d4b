#include "fabric/fabric_options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <string_view>

#include "core/comma_list.hpp"
#include "core/error.hpp"
#include "sweep/flag_suggestion.hpp"
#include "sweep/session_flags.hpp"

namespace ccbench::fabric {

std::string_view name(MemoryKind kind) { return kind == MemoryKind::cuda ? "cuda" : "host"; }

std::vector<Op> parse_fabric_ops(const std::string& text) {
  std::vector<Op> ops;
  for (const std::string_view view : split_commas(text)) {
    if (view.empty()) continue;
    const std::string item(view);
    const std::string full = item.rfind("fabric_", 0) == 0 ? item : "fabric_" + item;
    const auto op = parse_op(full);
    if (!op || info(*op).is_collective()) {
      throw UsageError("--ops: unknown fabric test '" + item + "' (expected " + op_aliases(all_fabric_ops()) + ")");
    }
    if (std::ranges::find(ops, *op) == ops.end()) ops.push_back(*op);
  }
  if (ops.empty()) throw UsageError("--ops: empty list (expected " + op_aliases(all_fabric_ops()) + ")");
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

  std::string ops = "pingpong,bw", memory = "host";
  SharedFlagText shared;
  shared.max_bytes = "4M";
  app.add_option("--ops", ops, "comma list: pingpong,bw,bibw,write,read")->default_str(ops);
  app.add_option("-p,--provider", config.provider,
                 "libfabric provider (efa, shm, tcp, ...); default: efa, else shm on one host, else tcp");
  app.add_option("-D,--domain", config.domain, "libfabric domain (NIC), default: the provider's first");
  app.add_flag("--list-providers", config.list_providers, "print the providers fi_getinfo offers and exit");
  app.add_option("--window", config.window, "outstanding operations of bw, bibw, write, read")->default_val(64);
  app.add_option("--memory", memory, "host | cuda (GPU buffers through FI_HMEM)")->default_str("host");
  add_shared_flags(app, run, shared, "operation");

  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) args.emplace_back(argv[i]);  // CLI11 consumes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    if (print_help) std::cout << app.help();
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(ccbench::parse_error_text(app, e));
  }

  run.ops = parse_fabric_ops(ops);
  apply_shared_flags(run, shared);
  if (run.sizes.min_bytes == 0) throw UsageError("-b/--min-bytes must be at least 1");
  if (config.window < 1 || config.window > 4096) throw UsageError("--window must be in 1..4096");
  if (memory == "host") {
    config.memory = MemoryKind::host;
  } else if (memory == "cuda") {
    config.memory = MemoryKind::cuda;
  } else {
    throw UsageError("--memory: expected host or cuda, got '" + memory + "'");
  }
  return true;
}

}  // namespace ccbench::fabric
