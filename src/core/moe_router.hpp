// `run --moe EXPERTS,TOP_K,TOKENS_PER_RANK,HIDDEN[,ROUTING]`: a seeded router that gives a
// mixture-of-experts layer's dispatch matrix (docs/method.md, "alltoallv and MoE"). Experts are
// placed EXPERTS / N per rank (expert e on rank e / (EXPERTS / N)); every token of every rank picks
// TOP_K distinct experts; the dispatch sends each (token, expert) pair's HIDDEN elements to the
// expert's rank, the combine (its transpose) brings them back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/traffic_matrix.hpp"

namespace ccbench {

enum class MoeRouting : std::uint8_t {
  uniform,  // every choice uniform over the experts not yet chosen
  zipf,     // expert e drawn with weight 1 / (e + 1)^S, without replacement
  hot,      // the first choice is expert HOT with probability FRACTION (else uniform over the others);
            // the other choices uniform over the experts not yet chosen
};
std::string_view name(MoeRouting routing);

struct MoeSpec {
  int experts = 0;
  int top_k = 0;
  std::uint64_t tokens_per_rank = 0;
  std::uint64_t hidden = 0;  // elements per token
  MoeRouting routing = MoeRouting::uniform;
  double zipf_exponent = 0;  // zipf:S
  int hot_expert = 0;        // hot:E:FRACTION
  double hot_fraction = 0;
  std::string text;  // as given, recorded in every row
};

// Throws UsageError naming --moe and the part that is wrong.
MoeSpec parse_moe_spec(std::string_view text);

// What the router chose on a job of `ranks` ranks.
struct MoeRoute {
  int ranks = 0;
  // tokens[s * ranks + d]: (token, expert) pairs rank s routes to experts on rank d. Each row sums
  // to tokens_per_rank x top_k.
  std::vector<std::uint64_t> tokens;
  std::vector<std::uint64_t> expert_pairs;  // per expert: the (token, expert) pairs it received
  std::uint64_t hot_first_choices = 0;      // hot: tokens whose first choice was the hot expert
};

// The same route for the same spec, rank count and seed on every rank and machine (its own
// generator, not the standard library's distributions). Throws UsageError naming --moe when the
// experts do not place evenly on `ranks` (EXPERTS % N != 0).
MoeRoute route_tokens(const MoeSpec& spec, int ranks, std::uint64_t seed);

// tokens x HIDDEN x element size: the dispatch matrix (its transpose is the combine).
TrafficMatrix dispatch_matrix(const MoeRoute& route, std::uint64_t hidden, std::uint64_t element_bytes);

}  // namespace ccbench
