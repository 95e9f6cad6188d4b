#include "fabric/fabric_options.hpp"

#include <algorithm>
#include <string_view>

#include "core/comma_list.hpp"
#include "core/error.hpp"

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

}  // namespace ccbench::fabric
