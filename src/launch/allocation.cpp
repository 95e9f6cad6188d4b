#include "launch/allocation.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

#include "core/comma_list.hpp"
#include "core/error.hpp"
#include "launch/hosts.hpp"

namespace ccbench::launch {
namespace {

bool parse_int(std::string_view s, int& out) {
  if (s.empty()) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::vector<int> expand_cpus_per_node(std::string_view text, std::string_view what) {
  constexpr int kMaxRepeat = 100000;  // as many nodes as a node list may expand to
  std::vector<int> cpus;
  for (const std::string_view item : split_commas(text)) {
    const auto paren = item.find("(x");
    int count = 0, repeat = 1;
    const bool ok = paren == std::string_view::npos
                        ? parse_int(item, count)
                        : parse_int(item.substr(0, paren), count) && item.back() == ')' &&
                              parse_int(item.substr(paren + 2, item.size() - paren - 3), repeat);
    if (!ok || count < 1 || repeat < 1 || repeat > kMaxRepeat ||
        cpus.size() + static_cast<std::size_t>(repeat) > kMaxRepeat)
      throw UsageError(fmt::format("{}: '{}' is not N or N(xM) with N, M >= 1", what, item));
    cpus.insert(cpus.end(), static_cast<std::size_t>(repeat), count);
  }
  return cpus;
}

std::optional<Allocation> allocation_from_environment() {
  const char* nodes = std::getenv("SLURM_JOB_NODELIST");
  if (!nodes || !*nodes) return std::nullopt;
  Allocation a;
  a.nodes = expand_slurm_nodelist(nodes, "SLURM_JOB_NODELIST");
  if (const char* cpus = std::getenv("SLURM_JOB_CPUS_PER_NODE"); cpus && *cpus) {
    a.cpus_text = cpus;
    a.cpus_per_node = expand_cpus_per_node(cpus, "SLURM_JOB_CPUS_PER_NODE");
    if (a.cpus_per_node.size() != a.nodes.size())
      throw UsageError(fmt::format("SLURM_JOB_CPUS_PER_NODE {}: {} nodes, but SLURM_JOB_NODELIST has {}", cpus,
                                   a.cpus_per_node.size(), a.nodes.size()));
  }
  return a;
}

void check_ranks_fit(const Allocation& allocation, const std::vector<std::string>& hosts, int ranks_per_host) {
  if (allocation.cpus_per_node.empty()) return;
  for (const auto& host : hosts) {
    for (std::size_t i = 0; i < allocation.nodes.size(); ++i) {
      if (allocation.nodes[i] != host || allocation.cpus_per_node[i] >= ranks_per_host) continue;
      throw UsageError(fmt::format(
          "--ranks-per-host {}: the allocation has {} CPU{} on {} (SLURM_JOB_CPUS_PER_NODE={}); srun cannot start {} "
          "ranks there (allocate more, or pass --overcommit to srun)",
          ranks_per_host, allocation.cpus_per_node[i], allocation.cpus_per_node[i] == 1 ? "" : "s", host,
          allocation.cpus_text, ranks_per_host));
    }
  }
}

}  // namespace ccbench::launch
