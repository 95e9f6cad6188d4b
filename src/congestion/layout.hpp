// `ccbench congestion` (docs/congestion.md): who measures and who congests. Pure arithmetic on the
// host of every rank, so the unit tests check every rule without a launcher.
//
//  - The measured set: every rank (or the first K of each host) of the first N hosts, GPCNeT's
//    "about 20% of the nodes" by default, or an explicit --measured-ranks list.
//  - Congestors: every other rank. Those on hosts that hold measured ranks are *local* congestors,
//    the others *remote*. alltoall and bcast run among the remote congestors (traffic of the
//    neighbours); incast pairs each remote congestor (a sender) with a local congestor (a receiver)
//    on a measured host, so its bytes come in through a measured host's link.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::congestion {

enum class Pattern { alltoall, incast, bcast };
std::string_view name(Pattern p);
// "alltoall,incast,bcast" -> patterns in that order; throws UsageError naming --congestors.
std::vector<Pattern> parse_patterns(const std::string& text);

// The colors of the communicators a pattern uses (BackendOptions::group_color, ControlChannel::split).
inline constexpr int kMeasuredColor = 0;
inline constexpr int kIdleColor = 1;
inline constexpr int kFirstActiveColor = 2;

struct LayoutOptions {
  std::optional<int> measured_hosts;               // --measured-hosts N
  int measured_per_host = 0;                       // --measured-per-host K (0 = every rank of a measured host)
  std::optional<std::vector<int>> measured_ranks;  // --measured-ranks LIST
  std::vector<Pattern> patterns;
};

// What one pattern asks of every rank.
struct PatternRoles {
  Pattern pattern = Pattern::alltoall;
  std::vector<int> color;                // per world rank: kMeasuredColor, kIdleColor or a group's color
  std::vector<std::vector<int>> groups;  // world ranks of each active group, in world order
  std::vector<int> roots;                // per group: the world rank that sends (bcast, incast), else -1
  int active_ranks() const;
};

struct Layout {
  int ranks = 0;
  int hosts = 0;
  std::vector<int> measured;           // world ranks, ascending; always holds rank 0 (it writes)
  std::vector<int> local_congestors;   // on measured hosts
  std::vector<int> remote_congestors;  // on the other hosts
  std::vector<PatternRoles> patterns;
  bool is_measured(int rank) const;
};

// host_of_rank: each world rank's host index (0, 1, ... in order of first appearance). Throws
// UsageError with a one-line message naming the flag when the layout cannot be made.
Layout make_layout(const std::vector<int>& host_of_rank, const LayoutOptions& options);

// Host indexes from hostnames (order of first appearance), or blocks of `ranks_per_host`
// consecutive ranks when that is > 0 (--ranks-per-host, for one machine standing for several).
std::vector<int> host_indexes(const std::vector<std::string>& hostnames, int ranks_per_host);

// "0,1,4-7" -> {0,1,4,5,6,7}; throws UsageError naming --measured-ranks.
std::vector<int> parse_rank_list(const std::string& text);

// One line per set for the console: "measured: ranks 0-1 on 2 hosts (...)".
std::vector<std::string> describe(const Layout& layout);

}  // namespace ccbench::congestion
