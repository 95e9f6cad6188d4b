#include "core/groups.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "core/bandwidth.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"

namespace ccbench::groups {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::ranges::sort(values);
  return stats::median_sorted(values);
}

}  // namespace

Spec parse(std::string_view text) {
  const std::string spec(text);
  if (lower(text) == "none") return {};
  const auto colon = text.find(':');
  const std::string kind = lower(text.substr(0, colon));
  if (colon == std::string_view::npos || (kind != "mod" && kind != "div")) {
    throw UsageError(fmt::format("--groups: unknown SPEC '{}' (expected mod:N, div:N or none)", spec));
  }
  const std::string_view number = text.substr(colon + 1);
  int n = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || n <= 0) {
    throw UsageError(fmt::format("--groups {}: N must be a positive integer (got '{}')", spec, number));
  }
  return {kind == "mod" ? Kind::mod : Kind::div, n};
}

std::string to_string(const Spec& spec) {
  switch (spec.kind) {
    case Kind::mod:
      return fmt::format("mod:{}", spec.n);
    case Kind::div:
      return fmt::format("div:{}", spec.n);
    default:
      return "none";
  }
}

int Layout::group_of(int world_rank) const {
  switch (spec.kind) {
    case Kind::mod:
      return world_rank % spec.n;
    case Kind::div:
      return world_rank / spec.n;
    default:
      return 0;
  }
}

int Layout::rank_in_group(int world_rank) const {
  switch (spec.kind) {
    case Kind::mod:
      return world_rank / spec.n;
    case Kind::div:
      return world_rank % spec.n;
    default:
      return world_rank;
  }
}

std::vector<int> Layout::members(int group) const {
  std::vector<int> out;
  for (int r = 0; r < world_size; ++r) {
    if (group_of(r) == group) out.push_back(r);
  }
  return out;
}

Layout make_layout(const Spec& spec, int world_size) {
  Layout layout;
  layout.spec = spec;
  layout.world_size = world_size;
  if (spec.kind == Kind::none) {
    layout.count = 1;
    layout.ranks_per_group = world_size;
    return layout;
  }
  const std::string text = to_string(spec);
  if (world_size % spec.n != 0) {
    throw UsageError(fmt::format("--groups {}: {} does not divide the {} ranks", text, spec.n, world_size));
  }
  layout.count = spec.kind == Kind::mod ? spec.n : world_size / spec.n;
  layout.ranks_per_group = world_size / layout.count;
  if (layout.ranks_per_group < 2) {
    throw UsageError(fmt::format("--groups {}: {} groups of one rank each out of {} ranks (a group needs at least 2)",
                                 text, layout.count, world_size));
  }
  return layout;
}

std::vector<std::vector<std::string>> group_hosts(const Layout& layout, const std::vector<std::string>& hostnames) {
  std::vector<std::vector<std::string>> out(static_cast<std::size_t>(layout.count));
  for (int g = 0; g < layout.count; ++g) {
    auto& hosts = out[static_cast<std::size_t>(g)];
    for (int r : layout.members(g)) {
      const std::string host =
          static_cast<std::size_t>(r) < hostnames.size() ? hostnames[static_cast<std::size_t>(r)] : "?";
      if (std::ranges::find(hosts, host) == hosts.end()) hosts.push_back(host);
    }
  }
  return out;
}

nlohmann::json layout_json(const Layout& layout, const std::vector<std::vector<std::string>>& hosts) {
  nlohmann::json world_ranks = nlohmann::json::array();
  std::size_t nodes = 0;
  for (int g = 0; g < layout.count; ++g) world_ranks.push_back(layout.members(g));
  for (const auto& h : hosts) nodes = std::max(nodes, h.size());
  return {{"spec", to_string(layout.spec)}, {"count", layout.count},      {"ranks_per_group", layout.ranks_per_group},
          {"nodes_per_group", nodes},       {"world_ranks", world_ranks}, {"hosts", hosts}};
}

nlohmann::json row_json(const Layout& layout, int nodes_per_group, Op op, std::uint64_t bytes,
                        const std::vector<std::vector<double>>& group_samples_us, double common_median_us,
                        const std::vector<std::uint64_t>& wrong) {
  const int n = layout.ranks_per_group;
  nlohmann::json medians = nlohmann::json::array(), busbw = nlohmann::json::array();
  for (const auto& samples : group_samples_us) {
    const double median = median_of(samples);
    medians.push_back(median);
    busbw.push_back(busbw_gbps(op, n, bytes, median));
  }
  return {{"spec", to_string(layout.spec)},
          {"count", layout.count},
          {"ranks_per_group", n},
          {"nodes_per_group", nodes_per_group},
          {"time_us_per_group", medians},
          {"busbw_gbps_per_group", busbw},
          {"algbw_gbps_aggregate", layout.count * algbw_gbps(bytes, common_median_us)},
          {"busbw_gbps_aggregate", layout.count * busbw_gbps(op, n, bytes, common_median_us)},
          {"wrong_per_group", wrong}};
}

}  // namespace ccbench::groups
