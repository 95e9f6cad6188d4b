// Issue 15 item 17: the data check compares against one period of the pattern. Its counts must
// equal evaluating the pattern's formula at every element, for every op, including corruptions
// past the first period and in later blocks.
#include <vector>

#include "core/pattern_check.hpp"
#include "core/types.hpp"
#include "test_support.hpp"

namespace ccbench::harden_test {
namespace {

using pattern::kPeriod;

TEST(PatternPeriod, ThePatternRepeatsEveryPeriod) {
  pattern::Params p;
  p.nranks = 3;
  p.seed = 7;
  p.exact_limit = 127;
  for (RedOp r : {RedOp::sum, RedOp::prod, RedOp::avg, RedOp::max}) {
    p.redop = r;
    for (std::uint64_t i : {0ull, 1ull, 12345ull, 65520ull}) {
      EXPECT_EQ(pattern::reduced_value(p, i), pattern::reduced_value(p, i + kPeriod));
      EXPECT_EQ(pattern::data_value(p, 2, i), pattern::data_value(p, 2, i + 5 * kPeriod));
    }
  }
  // Different ranks' blocks still differ (a misplaced block is caught).
  int differ = 0;
  for (std::uint64_t i = 0; i < 100; ++i) differ += pattern::data_value(p, 0, i) != pattern::data_value(p, 1, i);
  EXPECT_GT(differ, 50);
}

TEST(PatternPeriod, CheckEqualsTheFormulaAtEveryElement) {
  pattern::Params p;
  p.nranks = 3;
  p.seed = 11;
  p.exact_limit = 127;
  p.redop = RedOp::sum;
  const std::uint64_t count = 70001;  // > kPeriod and not a multiple of it
  for (Op op : {Op::allreduce, Op::reduce_scatter, Op::allgather, Op::alltoall, Op::broadcast}) {
    const int rank = 1;
    const bool blocks = op == Op::allgather || op == Op::alltoall;
    const std::uint64_t n = blocks ? count * 3 : count;
    auto expected = [&](std::uint64_t i) { return pattern::expected_value(op, p, rank, i, count); };
    // An input (one rank's send data) is periodic over the whole buffer: fill_periodic equals the formula.
    std::vector<float> in(n);
    pattern::fill_periodic(in.data(), n, [&](std::uint64_t i) { return pattern::input_value(op, p, rank, i); });
    for (std::uint64_t i = 0; i < n; ++i) {
      ASSERT_EQ(in[i], static_cast<float>(pattern::input_value(op, p, rank, i))) << name(op) << " " << i;
    }
    std::vector<float> out(n);
    for (std::uint64_t i = 0; i < n; ++i) out[i] = static_cast<float>(expected(i));
    EXPECT_EQ(pattern::count_wrong_periodic(out.data(), n, pattern::output_block(op, count), expected), 0u);
    for (std::uint64_t at : {std::uint64_t{3}, kPeriod + 5, n - 1}) out[at] += 1.0f;
    if (blocks) out[count + 2] += 1.0f;  // in the second peer's block
    std::uint64_t brute = 0;
    for (std::uint64_t i = 0; i < n; ++i) brute += out[i] != static_cast<float>(expected(i));
    EXPECT_EQ(brute, blocks ? 4u : 3u);
    EXPECT_EQ(pattern::count_wrong_periodic(out.data(), n, pattern::output_block(op, count), expected), brute)
        << name(op);
  }
}

}  // namespace
}  // namespace ccbench::harden_test
