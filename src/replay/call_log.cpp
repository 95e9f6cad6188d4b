#include "replay/call_log.hpp"

#include <fmt/format.h>

#include "core/types.hpp"

namespace ccbench::replay {

std::string call_log_path(const std::string& prefix, int world_rank) {
  return fmt::format("{}.rank{}.json", prefix, world_rank);
}

nlohmann::json call_log(const ReplayPlan& plan, int world_rank, const std::vector<std::uint64_t>& issued,
                        std::uint64_t passes) {
  const auto w = static_cast<std::size_t>(world_rank);
  const std::vector<PlannedCall>& planned = plan.calls[w];
  nlohmann::json calls = nlohmann::json::array();
  std::uint64_t bytes_per_pass = 0;
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const PlannedCall& call = planned[i];
    const CallSite& site = plan.sites[static_cast<std::size_t>(call.site)];
    const Communicator& comm = plan.communicators[static_cast<std::size_t>(call.communicator)];
    const trace::CallOpInfo& op = trace::info(site.trace_op);
    nlohmann::json entry = {
        {"order", i},          {"op", op.name},       {"dtype", info(site.dtype).name}, {"count", site.count},
        {"bytes", site.bytes}, {"group", site.group}, {"members", comm.world_ranks},    {"comm_rank", call.comm_rank},
    };
    // The values handed to the backend, in the communicator's ranks (members[root] is the world rank).
    if (op.takes_redop) entry["redop"] = name(call.redop);
    if (op.takes_root) entry["root"] = call.root;
    if (op.takes_peer) entry["peer"] = call.peer;
    entry["issued"] = i < issued.size() ? issued[i] : 0;
    bytes_per_pass += site.bytes;
    calls.push_back(std::move(entry));
  }
  return {
      {"rank", world_rank}, {"trace_rank", plan.map.trace_rank[w]}, {"copy", plan.map.copy[w]},
      {"passes", passes},   {"bytes_per_pass", bytes_per_pass},     {"calls", std::move(calls)},
  };
}

}  // namespace ccbench::replay
