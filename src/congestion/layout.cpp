#include "congestion/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "core/comma_list.hpp"
#include "core/error.hpp"

namespace ccbench::congestion {
namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// The comma list's items, each trimmed of spaces and tabs ("0, 1" is ranks 0 and 1).
std::vector<std::string> trimmed_items(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string_view item : split_commas(text)) out.push_back(trim(item));
  return out;
}

// Above any job's rank count; checked before a range is expanded (0-2147483647 would build 2^31
// ranks before the layout could say that most of them do not exist).
constexpr int kMaxListedRank = (1 << 20) - 1;

int parse_rank(const std::string& text, const std::string& all) {
  int value = -1;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  const bool too_large = ec == std::errc::result_out_of_range && ptr == end && !text.empty() && text[0] != '-';
  if (!too_large && (text.empty() || ec != std::errc() || ptr != end || value < 0)) {
    throw UsageError(fmt::format("--measured-ranks: '{}' in '{}' is not a rank (expected e.g. 0,1 or 0-3)", text, all));
  }
  if (too_large || value > kMaxListedRank) {
    throw UsageError(fmt::format("--measured-ranks: rank {} in '{}' is above {}, the largest rank a list may name",
                                 text, all, kMaxListedRank));
  }
  return value;
}

// "0-2,5" as a compact text of sorted ranks.
std::string ranks_text(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out.empty() ? "none" : out;
}

}  // namespace

std::string_view name(Pattern p) {
  switch (p) {
    case Pattern::alltoall:
      return "alltoall";
    case Pattern::incast:
      return "incast";
    case Pattern::bcast:
      return "bcast";
  }
  return "?";
}

std::vector<Pattern> parse_patterns(const std::string& text) {
  std::vector<Pattern> out;
  for (const std::string& item : trimmed_items(text)) {
    std::optional<Pattern> p;
    for (Pattern candidate : {Pattern::alltoall, Pattern::incast, Pattern::bcast}) {
      if (item == name(candidate)) p = candidate;
    }
    if (!p) {
      throw UsageError(fmt::format("--congestors: unknown pattern '{}' (expected alltoall, incast or bcast)", item));
    }
    if (std::find(out.begin(), out.end(), *p) != out.end()) {
      throw UsageError(fmt::format("--congestors: pattern '{}' given twice", item));
    }
    out.push_back(*p);
  }
  return out;
}

std::vector<int> parse_rank_list(const std::string& text) {
  std::set<int> ranks;
  for (const std::string& item : trimmed_items(text)) {
    const auto dash = item.find('-');
    if (dash == std::string::npos) {
      if (!ranks.insert(parse_rank(item, text)).second) {
        throw UsageError(fmt::format("--measured-ranks: rank {} given twice in '{}'", item, text));
      }
      continue;
    }
    const int lo = parse_rank(trim(item.substr(0, dash)), text);
    const int hi = parse_rank(trim(item.substr(dash + 1)), text);
    if (hi < lo) throw UsageError(fmt::format("--measured-ranks: range '{}' ends before it starts", item));
    for (int r = lo; r <= hi; ++r) {
      if (!ranks.insert(r).second) {
        throw UsageError(fmt::format("--measured-ranks: rank {} given twice in '{}'", r, text));
      }
    }
  }
  return {ranks.begin(), ranks.end()};
}

std::vector<int> host_indexes(const std::vector<std::string>& hostnames, int ranks_per_host) {
  std::vector<int> out;
  std::map<std::string, int> index;
  for (std::size_t r = 0; r < hostnames.size(); ++r) {
    if (ranks_per_host > 0) {
      out.push_back(static_cast<int>(r) / ranks_per_host);
      continue;
    }
    const auto [it, added] = index.emplace(hostnames[r], static_cast<int>(index.size()));
    out.push_back(it->second);
  }
  return out;
}

int PatternRoles::active_ranks() const {
  int n = 0;
  for (const auto& g : groups) n += static_cast<int>(g.size());
  return n;
}

bool Layout::is_measured(int rank) const { return std::binary_search(measured.begin(), measured.end(), rank); }

Layout make_layout(const std::vector<int>& host_of_rank, const LayoutOptions& options) {
  Layout layout;
  layout.ranks = static_cast<int>(host_of_rank.size());
  layout.hosts = host_of_rank.empty() ? 0 : *std::max_element(host_of_rank.begin(), host_of_rank.end()) + 1;
  const int ranks = layout.ranks;
  const int hosts = layout.hosts;
  if (options.patterns.empty()) throw UsageError("--congestors: no pattern given (expected alltoall, incast or bcast)");
  if (options.measured_per_host < 0) {
    throw UsageError(
        fmt::format("--measured-per-host: must be 0 (every rank) or more, got {}", options.measured_per_host));
  }
  std::vector<std::vector<int>> ranks_of_host(static_cast<std::size_t>(hosts));
  for (int r = 0; r < ranks; ++r)
    ranks_of_host[static_cast<std::size_t>(host_of_rank[static_cast<std::size_t>(r)])].push_back(r);

  std::string flag;
  if (options.measured_ranks) {
    if (options.measured_hosts) throw UsageError("--measured-ranks and --measured-hosts: give one of them, not both");
    flag = "--measured-ranks";
    for (int r : *options.measured_ranks) {
      if (r >= ranks) {
        throw UsageError(fmt::format("--measured-ranks: rank {} does not exist (the job has {} ranks)", r, ranks));
      }
    }
    layout.measured = *options.measured_ranks;
    std::sort(layout.measured.begin(), layout.measured.end());
    if (!layout.measured.empty() && layout.measured.front() != 0) {
      throw UsageError("--measured-ranks: must include rank 0 (it writes the result files)");
    }
  } else {
    const auto take = [&](int h) {
      const auto& on = ranks_of_host[static_cast<std::size_t>(h)];
      const std::size_t k = options.measured_per_host > 0
                                ? std::min(on.size(), static_cast<std::size_t>(options.measured_per_host))
                                : on.size();
      layout.measured.insert(layout.measured.end(), on.begin(), on.begin() + static_cast<std::ptrdiff_t>(k));
    };
    if (options.measured_hosts) {
      flag = fmt::format("--measured-hosts {}", *options.measured_hosts);
      if (*options.measured_hosts < 1 || *options.measured_hosts > hosts) {
        throw UsageError(fmt::format("--measured-hosts: {} is out of range (the job has {} host{})",
                                     *options.measured_hosts, hosts, hosts == 1 ? "" : "s"));
      }
      for (int h = 0; h < *options.measured_hosts; ++h) take(h);
    } else {
      // GPCNeT's share: about 20% of the hosts, and enough hosts for 2 measured ranks.
      flag = "the default measured set (the first 20% of the hosts)";
      int h = 0;
      const int wanted = std::max(1, static_cast<int>(std::ceil(0.2 * hosts)));
      for (; h < hosts && (h < wanted || layout.measured.size() < 2); ++h) take(h);
    }
    std::sort(layout.measured.begin(), layout.measured.end());
  }
  if (layout.measured.size() < 2) {
    throw UsageError(fmt::format("{}: the measured set needs at least 2 ranks, got {}", flag, layout.measured.size()));
  }
  if (static_cast<int>(layout.measured.size()) == ranks) {
    throw UsageError(fmt::format("{}: all {} ranks ({} host{}) would be measured; no ranks left for congestors", flag,
                                 ranks, hosts, hosts == 1 ? "" : "s"));
  }

  std::set<int> measured_hosts;
  for (int r : layout.measured) measured_hosts.insert(host_of_rank[static_cast<std::size_t>(r)]);
  for (int r = 0; r < ranks; ++r) {
    if (layout.is_measured(r)) continue;
    (measured_hosts.count(host_of_rank[static_cast<std::size_t>(r)]) ? layout.local_congestors
                                                                     : layout.remote_congestors)
        .push_back(r);
  }

  for (Pattern p : options.patterns) {
    PatternRoles roles;
    roles.pattern = p;
    roles.color.assign(static_cast<std::size_t>(ranks), kIdleColor);
    for (int r : layout.measured) roles.color[static_cast<std::size_t>(r)] = kMeasuredColor;
    const auto& remote = layout.remote_congestors;
    if (p == Pattern::alltoall || p == Pattern::bcast) {
      if (remote.size() < 2) {
        throw UsageError(
            fmt::format("--congestors {}: needs at least 2 congestor ranks on hosts without measured ranks, got {} ({} "
                        "measured ranks on {} of {} hosts)",
                        name(p), remote.size(), layout.measured.size(), measured_hosts.size(), hosts));
      }
      roles.groups.push_back(remote);
      roles.roots.push_back(p == Pattern::bcast ? remote.front() : -1);
      for (int r : remote) roles.color[static_cast<std::size_t>(r)] = kFirstActiveColor;
    } else {
      // Senders taken host by host in turn, so the receivers of one measured host hear from as
      // many different hosts as there are.
      std::vector<int> senders;
      std::map<int, std::vector<int>> remote_by_host;
      for (int r : remote) remote_by_host[host_of_rank[static_cast<std::size_t>(r)]].push_back(r);
      for (std::size_t i = 0; senders.size() < remote.size(); ++i) {
        for (const auto& [h, on] : remote_by_host) {
          if (i < on.size()) senders.push_back(on[i]);
        }
      }
      const auto& receivers = layout.local_congestors;
      if (senders.empty() || receivers.empty()) {
        throw UsageError(fmt::format(
            "--congestors incast: needs congestor ranks on the measured hosts to receive (got {}) and on other "
            "hosts to send (got {}); measure fewer ranks per host (--measured-per-host) or fewer hosts",
            receivers.size(), senders.size()));
      }
      const std::size_t pairs = std::min(senders.size(), receivers.size());
      for (std::size_t i = 0; i < pairs; ++i) {
        const int color = kFirstActiveColor + static_cast<int>(i);
        std::vector<int> group = {receivers[i], senders[i]};
        std::sort(group.begin(), group.end());
        roles.groups.push_back(group);
        roles.roots.push_back(senders[i]);
        for (int r : group) roles.color[static_cast<std::size_t>(r)] = color;
      }
    }
    layout.patterns.push_back(std::move(roles));
  }
  return layout;
}

std::vector<std::string> describe(const Layout& layout) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("measured: ranks {} ({} of {} ranks, {} hosts in the job)", ranks_text(layout.measured),
                              layout.measured.size(), layout.ranks, layout.hosts));
  const auto ranks_or_none = [](const std::vector<int>& r) { return r.empty() ? "none" : "ranks " + ranks_text(r); };
  lines.push_back(fmt::format("congestors on the measured hosts: {}; on the other hosts: {}",
                              ranks_or_none(layout.local_congestors), ranks_or_none(layout.remote_congestors)));
  for (const auto& roles : layout.patterns) {
    std::string groups;
    for (std::size_t g = 0; g < roles.groups.size(); ++g) {
      if (!groups.empty()) groups += "; ";
      if (roles.pattern == Pattern::incast) {
        const int root = roles.roots[g];
        const int other = roles.groups[g][0] == root ? roles.groups[g][1] : roles.groups[g][0];
        groups += fmt::format("{} -> {}", root, other);
      } else {
        groups += ranks_text(roles.groups[g]);
        if (roles.roots[g] >= 0) groups += fmt::format(" (root {})", roles.roots[g]);
      }
    }
    const int idle = layout.ranks - static_cast<int>(layout.measured.size()) - roles.active_ranks();
    lines.push_back(fmt::format("pattern {}: {}{}", name(roles.pattern), groups,
                                idle > 0 ? fmt::format("; {} congestor rank{} idle", idle, idle == 1 ? "" : "s") : ""));
  }
  return lines;
}

}  // namespace ccbench::congestion
