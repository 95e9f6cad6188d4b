#include "core/sendrecv_pattern.hpp"

#include <algorithm>
#include <array>

namespace ccbench {
namespace {

constexpr std::array<std::string_view, 4> kNames = {"ring", "pairwise", "many-to-one", "one-to-many"};
static_assert(kNames.size() == static_cast<std::size_t>(kLastSendRecvPattern) + 1);

}  // namespace

std::string_view name(SendRecvPattern pattern) { return kNames[static_cast<std::size_t>(pattern)]; }

std::optional<SendRecvPattern> parse_sendrecv_pattern(std::string_view text) {
  std::string spelled(text);
  std::ranges::replace(spelled, '_', '-');
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (spelled == kNames[i]) return static_cast<SendRecvPattern>(i);
  }
  return std::nullopt;
}

std::string sendrecv_pattern_names(std::string_view separator) {
  std::string out;
  for (std::string_view n : kNames) {
    if (!out.empty()) out += separator;
    out += n;
  }
  return out;
}

std::optional<std::string> peer_group_problem(SendRecvPattern pattern, int peer_group, int nranks) {
  if (pattern == SendRecvPattern::ring) {
    if (peer_group != 0) return "the ring pattern takes no peer group";
    return std::nullopt;
  }
  const std::string g = std::to_string(peer_group);
  if (peer_group < 2) return "a peer group of " + g + " ranks: it needs at least 2";
  if (nranks % peer_group != 0) {
    return "a peer group of " + g + " ranks does not divide the " + std::to_string(nranks) + " ranks";
  }
  if (pattern == SendRecvPattern::pairwise && peer_group % 2 != 0) {
    return "pairwise pairs the two halves of a group: a peer group of " + g + " ranks is odd";
  }
  return std::nullopt;
}

PatternPeers pattern_peers(SendRecvPattern pattern, int peer_group, int rank, int nranks) {
  PatternPeers peers;
  if (pattern == SendRecvPattern::ring) {
    peers.send_to.push_back((rank + 1) % nranks);
    peers.receive_from.push_back((rank + nranks - 1) % nranks);
    return peers;
  }
  const int first = rank / peer_group * peer_group;
  const int member = rank - first;
  switch (pattern) {
    case SendRecvPattern::pairwise: {
      const int half = peer_group / 2;
      if (member < half) {
        peers.send_to.push_back(rank + half);
      } else {
        peers.receive_from.push_back(rank - half);
      }
      break;
    }
    case SendRecvPattern::many_to_one:
      if (member == 0) {
        for (int r = first + 1; r < first + peer_group; ++r) peers.receive_from.push_back(r);
      } else {
        peers.send_to.push_back(first);
      }
      break;
    case SendRecvPattern::one_to_many:
      if (member == 0) {
        for (int r = first + 1; r < first + peer_group; ++r) peers.send_to.push_back(r);
      } else {
        peers.receive_from.push_back(first);
      }
      break;
    case SendRecvPattern::ring:
      break;
  }
  return peers;
}

PatternLoad pattern_load(SendRecvPattern pattern, int peer_group, int nranks) {
  const auto n = static_cast<std::uint64_t>(nranks);
  const auto groups = peer_group > 0 ? n / static_cast<std::uint64_t>(peer_group) : 0;
  switch (pattern) {
    case SendRecvPattern::ring:
      return {n, 1, 1};
    case SendRecvPattern::pairwise:
      return {n / 2, 1, 1};
    case SendRecvPattern::many_to_one:
      return {groups * static_cast<std::uint64_t>(peer_group - 1), peer_group - 1, 1};
    case SendRecvPattern::one_to_many:
      return {groups * static_cast<std::uint64_t>(peer_group - 1), 1, peer_group - 1};
  }
  return {};
}

double pattern_aggregate_gbps(const PatternLoad& load, std::uint64_t message_bytes, double time_us) {
  if (time_us <= 0) return 0;
  return static_cast<double>(load.messages) * static_cast<double>(message_bytes) / (time_us * 1e3);
}

double pattern_per_receiver_gbps(const PatternLoad& load, std::uint64_t message_bytes, double time_us) {
  if (time_us <= 0) return 0;
  return static_cast<double>(load.most_received) * static_cast<double>(message_bytes) / (time_us * 1e3);
}

double pattern_bus_factor(const PatternLoad& load) { return std::max(load.most_received, load.most_sent); }

std::uint64_t whole_blocks_count(std::uint64_t message_elements, std::uint64_t block_elements) {
  if (block_elements == 0) return message_elements;
  return message_elements / block_elements * block_elements;
}

}  // namespace ccbench
