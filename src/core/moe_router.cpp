#include "core/moe_router.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "core/comma_list.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"

namespace ccbench {
namespace {

constexpr std::uint64_t kMaxHidden = std::uint64_t{1} << 24;
constexpr std::uint64_t kMaxTokensPerRank = std::uint64_t{1} << 24;
constexpr int kMaxExperts = 4096;

std::uint64_t whole_number(std::string_view text, std::string_view spec, std::string_view what, std::uint64_t low,
                           std::uint64_t high) {
  std::uint64_t value = 0;
  const auto [at, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || at != text.data() + text.size() || value < low || value > high) {
    throw UsageError(
        fmt::format("--moe '{}': {} '{}' is not a whole number from {} to {}", spec, what, text, low, high));
  }
  return value;
}

// splitmix64: a fixed generator, so a seed gives the same route on every standard library.
struct Generator {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

// One draw from `weights` without the experts already `chosen`: a scan over the experts, exact for
// any weights (a rejection loop would spin on a dominant expert already taken).
int draw(const std::vector<double>& weights, const std::vector<bool>& chosen, Generator& gen) {
  double total = 0;
  int last = -1;
  for (std::size_t e = 0; e < weights.size(); ++e) {
    if (!chosen[e] && weights[e] > 0) {
      total += weights[e];
      last = static_cast<int>(e);
    }
  }
  if (last < 0) {  // every expert with weight is taken: the rest are equally likely
    std::size_t free = 0;
    for (std::size_t e = 0; e < chosen.size(); ++e) free += chosen[e] ? 0 : 1;
    auto pick = static_cast<std::size_t>(gen.uniform01() * static_cast<double>(free));
    for (std::size_t e = 0; e < chosen.size(); ++e) {
      if (chosen[e]) continue;
      if (pick-- == 0) return static_cast<int>(e);
    }
    return static_cast<int>(chosen.size()) - 1;
  }
  double u = gen.uniform01() * total;
  for (std::size_t e = 0; e < weights.size(); ++e) {
    if (chosen[e] || !(weights[e] > 0)) continue;
    if (u < weights[e]) return static_cast<int>(e);
    u -= weights[e];
  }
  return last;  // rounding left u at the end
}

}  // namespace

std::string_view name(MoeRouting routing) {
  switch (routing) {
    case MoeRouting::uniform:
      return "uniform";
    case MoeRouting::zipf:
      return "zipf";
    case MoeRouting::hot:
      return "hot";
  }
  return "uniform";
}

MoeSpec parse_moe_spec(std::string_view text) {
  const std::vector<std::string_view> parts = split_commas(text);
  if (parts.size() != 4 && parts.size() != 5) {
    throw UsageError(
        fmt::format("--moe '{}': expected EXPERTS,TOP_K,TOKENS_PER_RANK,HIDDEN[,ROUTING] (ROUTING uniform, zipf:S or "
                    "hot:E:FRACTION)",
                    text));
  }
  MoeSpec spec;
  spec.text = std::string(text);
  spec.experts = static_cast<int>(whole_number(parts[0], text, "EXPERTS", 1, kMaxExperts));
  spec.top_k = static_cast<int>(whole_number(parts[1], text, "TOP_K", 1, static_cast<std::uint64_t>(spec.experts)));
  spec.tokens_per_rank = whole_number(parts[2], text, "TOKENS_PER_RANK", 1, kMaxTokensPerRank);
  spec.hidden = whole_number(parts[3], text, "HIDDEN", 1, kMaxHidden);
  if (parts.size() == 4 || parts[4] == "uniform") return spec;
  const std::string_view routing = parts[4];
  if (routing.starts_with("zipf:")) {
    spec.routing = MoeRouting::zipf;
    const std::string_view s = routing.substr(5);
    double exponent = -1;
    try {
      exponent = parse_finite(s, "--moe");
    } catch (const UsageError&) {
    }
    if (!(exponent >= 0) || exponent > 100) {
      throw UsageError(fmt::format("--moe '{}': zipf:S needs an exponent S from 0 to 100, got '{}'", text, s));
    }
    spec.zipf_exponent = exponent;
    return spec;
  }
  if (routing.starts_with("hot:")) {
    spec.routing = MoeRouting::hot;
    const std::string_view rest = routing.substr(4);
    const std::size_t colon = rest.find(':');
    if (colon == std::string_view::npos) {
      throw UsageError(fmt::format("--moe '{}': hot:E:FRACTION needs the expert and the fraction", text));
    }
    spec.hot_expert = static_cast<int>(
        whole_number(rest.substr(0, colon), text, "the hot expert", 0, static_cast<std::uint64_t>(spec.experts - 1)));
    double fraction = -1;
    try {
      fraction = parse_finite(rest.substr(colon + 1), "--moe");
    } catch (const UsageError&) {
    }
    if (!(fraction >= 0) || fraction > 1) {
      throw UsageError(fmt::format("--moe '{}': hot:E:FRACTION needs a FRACTION from 0 to 1, got '{}'", text,
                                   rest.substr(colon + 1)));
    }
    spec.hot_fraction = fraction;
    return spec;
  }
  throw UsageError(
      fmt::format("--moe '{}': unknown routing '{}' (expected uniform, zipf:S or hot:E:FRACTION)", text, routing));
}

MoeRoute route_tokens(const MoeSpec& spec, int ranks, std::uint64_t seed) {
  if (ranks < 1 || spec.experts % ranks != 0) {
    throw UsageError(
        fmt::format("--moe '{}': {} experts do not place evenly on the job's {} ranks (EXPERTS must be "
                    "a multiple of the rank count)",
                    spec.text, spec.experts, ranks));
  }
  const int experts_per_rank = spec.experts / ranks;
  const auto e_count = static_cast<std::size_t>(spec.experts);
  std::vector<double> later(e_count, 1.0);  // every choice after the first, and uniform's first
  std::vector<double> first = later;
  if (spec.routing == MoeRouting::zipf) {
    for (std::size_t e = 0; e < e_count; ++e) first[e] = 1.0 / std::pow(static_cast<double>(e + 1), spec.zipf_exponent);
    later = first;
  } else if (spec.routing == MoeRouting::hot) {
    const double others = spec.experts > 1 ? (1.0 - spec.hot_fraction) / (spec.experts - 1) : 0.0;
    for (std::size_t e = 0; e < e_count; ++e) first[e] = others;
    first[static_cast<std::size_t>(spec.hot_expert)] = spec.hot_fraction;
  }
  MoeRoute route;
  route.ranks = ranks;
  route.tokens.assign(static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks), 0);
  route.expert_pairs.assign(e_count, 0);
  // One generator per sending rank, seeded from the run's seed and the rank, so a rank's choices do
  // not depend on how many ranks come before it.
  std::vector<bool> chosen(e_count, false);
  std::vector<int> picks;
  for (int s = 0; s < ranks; ++s) {
    Generator gen{seed * 0x100000001B3ull + static_cast<std::uint64_t>(s) * 0x9E3779B97F4A7C15ull + 1};
    for (std::uint64_t t = 0; t < spec.tokens_per_rank; ++t) {
      picks.clear();
      for (int k = 0; k < spec.top_k; ++k) {
        const int e = draw(k == 0 ? first : later, chosen, gen);
        chosen[static_cast<std::size_t>(e)] = true;
        picks.push_back(e);
      }
      if (spec.routing == MoeRouting::hot && picks.front() == spec.hot_expert) ++route.hot_first_choices;
      for (const int e : picks) {
        chosen[static_cast<std::size_t>(e)] = false;
        ++route.expert_pairs[static_cast<std::size_t>(e)];
        ++route.tokens[static_cast<std::size_t>(s) * static_cast<std::size_t>(ranks) +
                       static_cast<std::size_t>(e / experts_per_rank)];
      }
    }
  }
  return route;
}

TrafficMatrix dispatch_matrix(const MoeRoute& route, std::uint64_t hidden, std::uint64_t element_bytes) {
  TrafficMatrix matrix{route.ranks, {}};
  matrix.bytes.reserve(route.tokens.size());
  for (const std::uint64_t pairs : route.tokens) matrix.bytes.push_back(pairs * hidden * element_bytes);
  return matrix;
}

}  // namespace ccbench
