// sendrecv's peer patterns (docs/method.md, "sendrecv patterns"): which ranks send to which, how
// many messages a pattern moves and how many the busiest rank takes in or sends out, which the
// pattern's bandwidths divide by. `ring` is nccl-tests' sendrecv (rank+1 / rank-1); the others model
// the KV-cache moves of disaggregated prefill and decode within consecutive groups of G ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench {

enum class SendRecvPattern : std::uint8_t {
  ring,         // each rank sends to rank+1 and receives from rank-1 (no groups)
  pairwise,     // member i of a group's first half sends to member i + G/2 (prefill -> decode)
  many_to_one,  // every member but the first sends to the group's first rank
  one_to_many,  // the group's first rank sends to every other member
};
inline constexpr SendRecvPattern kLastSendRecvPattern = SendRecvPattern::one_to_many;

std::string_view name(SendRecvPattern pattern);  // ring, pairwise, many-to-one, one-to-many
// Takes the names and their underscore spellings (many_to_one); nullopt for anything else.
std::optional<SendRecvPattern> parse_sendrecv_pattern(std::string_view text);
std::string sendrecv_pattern_names(std::string_view separator);  // in enum order

// Why a peer group of `peer_group` ranks cannot run `pattern` on `nranks` ranks, or nullopt. ring
// takes no group (peer_group 0); the others need 2 <= G, G dividing nranks, and pairwise an even G.
std::optional<std::string> peer_group_problem(SendRecvPattern pattern, int peer_group, int nranks);

// The ranks `rank` sends its message to and receives one from, in ascending order (ring: one of
// each). Assumes peer_group_problem returned nullopt.
struct PatternPeers {
  std::vector<int> send_to;
  std::vector<int> receive_from;
  bool operator==(const PatternPeers&) const = default;
};
PatternPeers pattern_peers(SendRecvPattern pattern, int peer_group, int rank, int nranks);

// The whole pattern's traffic in messages of S bytes each: all messages moved, and the most any one
// rank receives or sends. The same on every rank (the result row's bandwidths divide by it).
struct PatternLoad {
  std::uint64_t messages = 0;
  int most_received = 0;  // messages the most loaded receiver takes in
  int most_sent = 0;      // messages the most loaded sender puts out
  bool operator==(const PatternLoad&) const = default;
};
PatternLoad pattern_load(SendRecvPattern pattern, int peer_group, int nranks);

// GB/s (1e9 B/s) from messages of `message_bytes` and a time in microseconds; 0 for a
// non-positive time. aggregate: every message of the pattern; per receiver: the most loaded
// receiver's messages. busbw factor: the busiest rank's messages in or out (1 for ring and
// pairwise, G-1 for many-to-one and one-to-many), so busbw is what that rank's link carries.
double pattern_aggregate_gbps(const PatternLoad& load, std::uint64_t message_bytes, double time_us);
double pattern_per_receiver_gbps(const PatternLoad& load, std::uint64_t message_bytes, double time_us);
double pattern_bus_factor(const PatternLoad& load);

// --block-bytes: a message is posted as blocks of `block_elements` (0: the message is one block).
// Its count is rounded down to whole blocks, as run rounds sizes down to whole elements (0: the
// size is smaller than one block).
std::uint64_t whole_blocks_count(std::uint64_t message_elements, std::uint64_t block_elements);
// The elements of each block of a message of `message_elements` (already whole blocks).
inline std::uint64_t block_elements_of(std::uint64_t message_elements, std::uint64_t block_elements) {
  return block_elements == 0 ? message_elements : block_elements;
}

}  // namespace ccbench

namespace ccbench {

// One send or receive of a pattern's message block: the peer, where the block lies (in elements
// from the send buffer for a send; from the receive buffer, where the k-th sender of
// receive_from lands at k x count, for a receive) and its length.
struct BlockCall {
  bool send = false;
  int peer = 0;
  std::uint64_t offset_elements = 0;
  std::uint64_t count = 0;
  bool operator==(const BlockCall&) const = default;
};

// Calls f(BlockCall) for each block `peers` posts for messages of `count` elements (whole blocks of
// `block_elements`; 0: one block): every send, then every receive, blocks in order. Both backends
// post them together (MPI_Isend/MPI_Irecv then MPI_Waitall; one ncclGroup); blocks between one pair
// match in posting order. No allocation: the backends call it inside the timed op.
template <typename F>
void for_each_block_call(const PatternPeers& peers, std::uint64_t count, std::uint64_t block_elements, F&& f) {
  const std::uint64_t block = block_elements_of(count, block_elements);
  if (block == 0) return;
  for (int to : peers.send_to) {
    for (std::uint64_t offset = 0; offset < count; offset += block) f(BlockCall{true, to, offset, block});
  }
  for (std::size_t k = 0; k < peers.receive_from.size(); ++k) {
    for (std::uint64_t offset = 0; offset < count; offset += block) {
      f(BlockCall{false, peers.receive_from[k], k * count + offset, block});
    }
  }
}

}  // namespace ccbench
