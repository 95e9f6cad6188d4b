// The --moe router: its counts (each rank routes tokens x top_k pairs), distinct experts per token,
// the hot expert's drawn fraction and the dispatch's imbalance against the probabilities asked for
// (within 4 binomial standard deviations, computed below), zipf's ordering, the spec's errors.
#include "core/moe_router.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace ccbench {
namespace {

std::uint64_t row_sum(const MoeRoute& route, int sender) {
  std::uint64_t sum = 0;
  for (int d = 0; d < route.ranks; ++d) sum += route.tokens[static_cast<std::size_t>(sender * route.ranks + d)];
  return sum;
}

TEST(MoeRouter, EveryRankRoutesTokensTimesTopK) {
  for (const char* text : {"8,2,300,4", "8,3,300,4,zipf:1.2", "8,2,300,4,hot:5:0.9"}) {
    const MoeRoute route = route_tokens(parse_moe_spec(text), 4, 11);
    for (int s = 0; s < 4; ++s) EXPECT_EQ(row_sum(route, s), 300u * (text[2] - '0')) << text;
    EXPECT_EQ(std::accumulate(route.expert_pairs.begin(), route.expert_pairs.end(), std::uint64_t{0}),
              4u * 300u * (text[2] - '0'));
  }
}

// TOP_K = EXPERTS: a token's choices are distinct only if each token reaches every expert once, so
// every rank sends exactly TOKENS x (experts per rank) pairs to every rank.
TEST(MoeRouter, TopKExpertsAreDistinct) {
  const MoeRoute route = route_tokens(parse_moe_spec("4,4,100,1,zipf:3"), 2, 5);
  for (const std::uint64_t pairs : route.tokens) EXPECT_EQ(pairs, 200u);
}

TEST(MoeRouter, SameSeedSameRouteOtherSeedOther) {
  const MoeSpec spec = parse_moe_spec("8,2,500,4");
  EXPECT_EQ(route_tokens(spec, 4, 1).tokens, route_tokens(spec, 4, 1).tokens);
  EXPECT_NE(route_tokens(spec, 4, 1).tokens, route_tokens(spec, 4, 2).tokens);
}

// hot:3:0.5 over 4 ranks x 5000 tokens: the first choice is a Bernoulli(0.5) draw per token, so the
// drawn fraction's standard deviation is sqrt(0.5 x 0.5 / 20000) = 0.00354; 4 of them: 0.0141.
TEST(MoeRouter, HotFractionWithinItsSamplingError) {
  const MoeSpec spec = parse_moe_spec("8,2,5000,4,hot:3:0.5");
  const MoeRoute route = route_tokens(spec, 4, 1);
  const double tokens = 4.0 * 5000.0;
  const double drawn = static_cast<double>(route.hot_first_choices) / tokens;
  const double sigma = std::sqrt(0.5 * 0.5 / tokens);
  EXPECT_NEAR(drawn, 0.5, 4 * sigma);
}

// The dispatch row's imbalance is what the generator was asked for. hot:3:0.5, TOP_K 1, 8 experts on
// 4 ranks (2 each; expert 3 on rank 1): a token lands on rank 1 with p = 0.5 + 0.5 x 1/7 = 4/7
// (the hot expert, or its neighbour among the 7 others). Rank 1 receives 4 x 5000 x p tokens and
// every rank sends 5000: imbalance = 4p = 2.2857. Rank 1's received count is binomial over 20000
// tokens, so the imbalance's standard deviation is 4 sqrt(p (1 - p) / 20000) = 0.0140; 4 of them.
TEST(MoeRouter, HotDispatchImbalanceIsTheOneAskedFor) {
  const MoeSpec spec = parse_moe_spec("8,1,5000,16,hot:3:0.5");
  const TrafficMatrix dispatch = dispatch_matrix(route_tokens(spec, 4, 1), spec.hidden, 2);
  const MatrixLoad load = load_of(dispatch);
  const double p = 0.5 + 0.5 / 7.0;
  EXPECT_EQ(load.most_loaded_rank, 1);
  EXPECT_NEAR(load.imbalance, 4 * p, 4 * 4 * std::sqrt(p * (1 - p) / 20000.0));
  EXPECT_EQ(load.total_bytes, 4u * 5000u * 16u * 2u);  // tokens x hidden x dtype, every rank
}

// zipf:1 over 8 experts, one per rank: expert e's share is (1/(e+1)) / H_8; the neighbours' means
// differ by at least 40000 / 2.718 x (1/7 - 1/8) = 263 pairs against a standard deviation of their
// difference near 62, and the seed is fixed: the counts fall in order.
TEST(MoeRouter, ZipfOrdersTheExperts) {
  const MoeRoute route = route_tokens(parse_moe_spec("8,1,5000,1,zipf:1"), 8, 3);
  for (std::size_t e = 1; e < 8; ++e) EXPECT_GT(route.expert_pairs[e - 1], route.expert_pairs[e]) << e;
}

std::string error_of(std::string_view text, int ranks = 4) {
  try {
    route_tokens(parse_moe_spec(text), ranks, 1);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(MoeRouter, SpecErrorsNameMoe) {
  EXPECT_EQ(error_of("6,2,10,4"),
            "--moe '6,2,10,4': 6 experts do not place evenly on the job's 4 ranks (EXPERTS must be a multiple of the "
            "rank count)");
  EXPECT_EQ(error_of("8,9,10,4"), "--moe '8,9,10,4': TOP_K '9' is not a whole number from 1 to 8");
  EXPECT_EQ(error_of("8,2,10"),
            "--moe '8,2,10': expected EXPERTS,TOP_K,TOKENS_PER_RANK,HIDDEN[,ROUTING] (ROUTING uniform, zipf:S or "
            "hot:E:FRACTION)");
  EXPECT_EQ(error_of("8,2,10,4,hot:8:0.5"),
            "--moe '8,2,10,4,hot:8:0.5': the hot expert '8' is not a whole number "
            "from 0 to 7");
  EXPECT_EQ(error_of("8,2,10,4,hot:1:1.5"),
            "--moe '8,2,10,4,hot:1:1.5': hot:E:FRACTION needs a FRACTION from 0 to 1, "
            "got '1.5'");
  EXPECT_EQ(error_of("8,2,10,4,zipf:x"), "--moe '8,2,10,4,zipf:x': zipf:S needs an exponent S from 0 to 100, got 'x'");
  EXPECT_EQ(error_of("8,2,10,4,skewed"),
            "--moe '8,2,10,4,skewed': unknown routing 'skewed' (expected uniform, zipf:S or hot:E:FRACTION)");
}

}  // namespace
}  // namespace ccbench
