// The traffic matrix of the matrix ops (alltoallv, moe_*): load and imbalance by hand, the
// transpose, one rank's counts and displacements, the CSV's errors, and the host data check.
#include "core/traffic_matrix.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/alltoallv_check.hpp"
#include "core/error.hpp"

namespace ccbench {
namespace {

// Row = sender. Sent: r0 24, r1 20, r2 40; received: r0 44, r1 20, r2 20; total 84.
TrafficMatrix three_ranks() { return {3, {0, 8, 16, 4, 12, 4, 40, 0, 0}}; }

TEST(TrafficMatrix, LoadAndImbalanceByHand) {
  const MatrixLoad load = load_of(three_ranks());
  EXPECT_EQ(load.total_bytes, 84u);
  EXPECT_EQ(load.off_rank_bytes, 72u);  // the diagonal's 12 bytes stay on rank 1
  EXPECT_DOUBLE_EQ(load.mean_send_bytes, 28.0);
  EXPECT_DOUBLE_EQ(load.mean_off_rank_send_bytes, 24.0);
  EXPECT_EQ(load.most_loaded_rank, 0);  // receives 8 + 4 + ... = 0 + 4 + 40 = 44
  EXPECT_EQ(load.most_loaded_bytes, 44u);
  EXPECT_DOUBLE_EQ(load.imbalance, 44.0 / 28.0);
  EXPECT_EQ(load.most_loaded_off_rank_rank, 0);
  EXPECT_EQ(load.most_loaded_off_rank_bytes, 44u);
}

TEST(TrafficMatrix, EvenMatrixHasImbalanceOne) {
  const MatrixLoad load = load_of({2, {16, 16, 16, 16}});
  EXPECT_DOUBLE_EQ(load.imbalance, 1.0);
  EXPECT_DOUBLE_EQ(load.mean_off_rank_send_bytes, 16.0);
}

TEST(TrafficMatrix, OneReceiverHasImbalanceN) {  // every rank sends all it has to rank 0
  const MatrixLoad load = load_of({4, {8, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0}});
  EXPECT_DOUBLE_EQ(load.imbalance, 4.0);
  EXPECT_EQ(load.most_loaded_off_rank_bytes, 24u);
}

TEST(TrafficMatrix, CombineIsTheTranspose) {
  const TrafficMatrix m = three_ranks();
  const TrafficMatrix t = transpose(m);
  for (int s = 0; s < 3; ++s) {
    for (int d = 0; d < 3; ++d) EXPECT_EQ(t.at(d, s), m.at(s, d));
  }
  const MatrixCase combine = matrix_case(Op::moe_combine, m, 1, 4);
  EXPECT_EQ(combine.matrix.bytes, t.bytes);
  // The pair moves both: each rank sends what it sent plus what it received.
  const MatrixCase pair = matrix_case(Op::moe_pair, m, 1, 4);
  EXPECT_EQ(pair.load.total_bytes, 168u);
  EXPECT_EQ(pair.load.most_loaded_bytes, 68u);  // rank 0: 24 + 44
}

TEST(TrafficMatrix, RankCountsByHand) {
  const AlltoallvCounts c = rank_counts(three_ranks(), 1, 4);
  EXPECT_EQ(c.send_counts, (std::vector<std::uint64_t>{1, 3, 1}));
  EXPECT_EQ(c.send_displs, (std::vector<std::uint64_t>{0, 1, 4}));
  EXPECT_EQ(c.recv_counts, (std::vector<std::uint64_t>{2, 3, 0}));
  EXPECT_EQ(c.recv_displs, (std::vector<std::uint64_t>{0, 2, 5}));
  // Rank 0's block to rank 1 starts after its 0 bytes to rank 0; rank 1's own after 1 element;
  // rank 2's after its 40 bytes (10 elements) to rank 0.
  EXPECT_EQ(c.source_offsets, (std::vector<std::uint64_t>{0, 1, 10}));
  EXPECT_EQ(c.send_elements, 5u);
  EXPECT_EQ(c.recv_elements, 5u);
}

TEST(TrafficMatrix, LayoutIsTheSameOnEveryRank) {
  for (int rank = 0; rank < 3; ++rank) {
    const OpLayout layout = matrix_layout(matrix_case(Op::alltoallv, three_ranks(), rank, 4), 4);
    EXPECT_EQ(layout.bytes, 28u);
    EXPECT_EQ(layout.count, 7u);
  }
  const MatrixCase pair = matrix_case(Op::moe_pair, three_ranks(), 0, 4);
  EXPECT_EQ(matrix_layout(pair, 4).recv_elements, 11u + 6u);  // dispatch's 44 bytes in, then its own 24 back
}

std::string error_of(std::string_view text, int ranks = 3, std::uint64_t element_bytes = 4) {
  try {
    parse_matrix_csv(text, "m.csv", ranks, element_bytes);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(TrafficMatrixCsv, ParsesRowsAsSenders) {
  const TrafficMatrix m = parse_matrix_csv("# bytes\n0, 8,16\r\n4,12,4\n\n40,0,0\n", "m.csv", 3, 4);
  EXPECT_EQ(m.bytes, three_ranks().bytes);
}

TEST(TrafficMatrixCsv, ErrorsNameTheFileLineAndColumn) {
  EXPECT_EQ(error_of("0,8,16\n4,x,4\n40,0,0\n"), "m.csv:2:2: 'x' is not a byte count (a non-negative integer)");
  EXPECT_EQ(error_of("0,8,16\n4,4,-4\n40,0,0\n"), "m.csv:2:3: '-4' is not a byte count (counts must not be negative)");
  EXPECT_EQ(error_of("0,8,16\n4,4,4\n40,0,6\n"), "m.csv:3:3: 6 bytes is not a multiple of the 4-byte element");
  EXPECT_EQ(error_of("0,8\n4,4,4\n40,0,0\n"), "m.csv:1: 2 columns: the matrix must be N x N for the job's 3 ranks");
  EXPECT_EQ(error_of("0,8,16,4\n"), "m.csv:1:4: more than 3 columns: the matrix must be N x N for the job's 3 ranks");
  EXPECT_EQ(error_of("0,8,16\n4,4,4\n"), "m.csv: 2 rows: the matrix must be N x N for the job's 3 ranks");
  EXPECT_EQ(error_of("0,8,16\n4,4,4\n4,4,4\n4,4,4\n"),
            "m.csv:4: more than 3 rows: the matrix must be N x N for the job's 3 ranks");
  EXPECT_EQ(error_of("0,8,\n4,4,4\n40,0,0\n"), "m.csv:1:3: '' is not a byte count (a non-negative integer)");
}

// The check: rank 1 of the matrix above receives rank 0's elements 0-1, its own 1-3, none of rank 2's.
TEST(AlltoallvCheck, EachBlockIsTheSendersPatternAtItsPlace) {
  pattern::Params p;
  p.nranks = 3;
  p.seed = 7;
  const MatrixCase mc = matrix_case(Op::alltoallv, three_ranks(), 1, 4);
  std::vector<float> out;
  for (std::uint64_t j = 0; j < 2; ++j) out.push_back(static_cast<float>(pattern::data_value(p, 0, j)));
  for (std::uint64_t j = 1; j < 4; ++j) out.push_back(static_cast<float>(pattern::data_value(p, 1, j)));
  EXPECT_EQ(pattern::count_wrong_alltoallv(out.data(), mc, p, 1), 0u);
  std::swap(out[0], out[2]);  // rank 0's first element where rank 1's belongs
  const bool differ = pattern::data_value(p, 0, 0) != pattern::data_value(p, 1, 1);
  EXPECT_EQ(pattern::count_wrong_alltoallv(out.data(), mc, p, 1), differ ? 2u : 0u);
  out.assign(out.size(), 101.0f);
  EXPECT_EQ(pattern::count_wrong_alltoallv(out.data(), mc, p, 1), 5u);
}

// moe_pair: after the combine, the second region holds the rank's own input.
TEST(AlltoallvCheck, PairCombineBringsTheInputBack) {
  pattern::Params p;
  p.nranks = 3;
  const MatrixCase mc = matrix_case(Op::moe_pair, three_ranks(), 2, 4);
  std::vector<float> out(mc.counts.recv_elements + mc.combine.recv_elements, 0.0f);
  for (std::size_t peer = 0; peer < 3; ++peer) {
    for (std::uint64_t j = 0; j < mc.counts.recv_counts[peer]; ++j) {
      out[mc.counts.recv_displs[peer] + j] =
          static_cast<float>(pattern::data_value(p, static_cast<int>(peer), mc.counts.source_offsets[peer] + j));
    }
  }
  for (std::uint64_t j = 0; j < mc.combine.recv_elements; ++j) {
    out[mc.counts.recv_elements + j] = static_cast<float>(pattern::data_value(p, 2, j));
  }
  EXPECT_EQ(mc.combine.recv_elements, 10u);  // rank 2 sent 40 bytes
  EXPECT_EQ(pattern::count_wrong_alltoallv(out.data(), mc, p, 2), 0u);
  out.back() = 101.0f;
  EXPECT_EQ(pattern::count_wrong_alltoallv(out.data(), mc, p, 2), 1u);
}

}  // namespace
}  // namespace ccbench
