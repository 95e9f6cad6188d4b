// Concurrent groups (`ccbench run --groups SPEC`, docs/method.md "Concurrent groups"): the SPEC
// grammar and the layout arithmetic, pure. SPEC follows nccl-tests' NCCL_TESTS_SPLIT:
//
//   mod:N   ranks with the same world rank mod N form a group  -> N groups of size/N ranks
//   div:N   consecutive blocks of N ranks form a group          -> size/N groups of N ranks
//   none    one communicator of every rank (the default; no groups recorded)
//
// Within a group, ranks are numbered in world order (MPI_Comm_split with the world rank as key),
// so the group's rank 0 is its lowest world rank.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.hpp"

namespace ccbench::groups {

enum class Kind { none, mod, div };

struct Spec {
  Kind kind = Kind::none;
  int n = 0;  // the N of mod:N / div:N; 0 for none
  bool operator==(const Spec&) const = default;
};

// Parses SPEC ("mod:8", "div:2", "none"; the kind is case-insensitive). Throws UsageError naming
// --groups: unknown kind, N not a positive integer.
Spec parse(std::string_view text);
// "mod:8", "div:2", "none".
std::string to_string(const Spec& spec);

// How `spec` splits `world_size` ranks. Construct with make_layout (checks it).
struct Layout {
  Spec spec;
  int world_size = 1;
  int count = 1;            // groups
  int ranks_per_group = 1;  // every group has the same size

  bool grouped() const { return spec.kind != Kind::none; }
  // The group (0..count-1) of a world rank; it is also the color of MPI_Comm_split.
  int group_of(int world_rank) const;
  // The rank within its group, in world order.
  int rank_in_group(int world_rank) const;
  // The world ranks of a group, ascending (index = rank in the group).
  std::vector<int> members(int group) const;
};

// Throws UsageError naming --groups when the spec does not divide the ranks or leaves groups of
// one rank (a collective of one rank measures nothing). `none` gives one group of every rank.
Layout make_layout(const Spec& spec, int world_size);

// The distinct hosts each group spans, from every world rank's hostname (index = world rank).
std::vector<std::vector<std::string>> group_hosts(const Layout& layout, const std::vector<std::string>& hostnames);

// The layout as the result file records it under config.groups: spec, count, ranks_per_group,
// nodes_per_group (the most hosts any group spans), world_ranks[g], hosts[g].
nlohmann::json layout_json(const Layout& layout, const std::vector<std::vector<std::string>>& hosts);

// One row's `groups` field (docs/result-format.md) from what the engine measured:
// group_samples_us[g] = group g's time of every sample (its slowest rank, after the common barrier),
// common_median_us = the median of the row's samples (the slowest rank of all groups), wrong[g] the
// data check's wrong elements in group g. Bandwidths use the group's size for the bus factor:
//   busbw_gbps_per_group[g] = busbw(op, ranks_per_group, bytes, median(group_samples_us[g]))
//   busbw_gbps_aggregate    = count * busbw(op, ranks_per_group, bytes, common_median_us)
nlohmann::json row_json(const Layout& layout, int nodes_per_group, Op op, std::uint64_t bytes,
                        const std::vector<std::vector<double>>& group_samples_us, double common_median_us,
                        const std::vector<std::uint64_t>& wrong);

}  // namespace ccbench::groups
