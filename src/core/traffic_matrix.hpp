// The per-peer byte counts of an alltoallv (`run --matrix FILE.csv`, `run --moe ...`, a traced
// alltoallv in `replay`): an N x N matrix, row = sender, and what follows from it: each rank's
// counts and displacements, the load of the most loaded rank and the matrix's imbalance
// (docs/method.md, "alltoallv and MoE").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/bandwidth.hpp"

namespace ccbench {

struct TrafficMatrix {
  int ranks = 0;
  std::vector<std::uint64_t> bytes;  // ranks x ranks, row-major: bytes[sender * ranks + receiver]

  std::uint64_t at(int sender, int receiver) const {
    return bytes[static_cast<std::size_t>(sender) * static_cast<std::size_t>(ranks) +
                 static_cast<std::size_t>(receiver)];
  }
};

// The matrix with senders and receivers swapped: MoE's combine returns what dispatch sent.
TrafficMatrix transpose(const TrafficMatrix& matrix);

struct MatrixLoad {
  std::uint64_t total_bytes = 0;     // every entry, the diagonal (a rank's copy to itself) included
  std::uint64_t off_rank_bytes = 0;  // the entries off the diagonal: what crosses a link
  double mean_send_bytes = 0;        // total / ranks
  double mean_off_rank_send_bytes = 0;
  // The most loaded rank: the largest of every rank's sent and received bytes (diagonal included).
  int most_loaded_rank = 0;
  std::uint64_t most_loaded_bytes = 0;
  // The same over off-rank bytes only: what the most loaded rank's link must carry one way, which
  // bounds the op's time from below at the link's rate.
  int most_loaded_off_rank_rank = 0;
  std::uint64_t most_loaded_off_rank_bytes = 0;
  // most_loaded_bytes / mean_send_bytes: 1 for an even matrix, N when one rank receives everything.
  double imbalance = 0;
};

MatrixLoad load_of(const TrafficMatrix& matrix);

// One rank's side of an alltoallv over `matrix`, in elements of `element_bytes` (MPI_Alltoallv's
// arguments; NCCL's grouped sends and receives use the same counts and offsets).
struct AlltoallvCounts {
  std::vector<std::uint64_t> send_counts;  // to each peer
  std::vector<std::uint64_t> send_displs;  // where each peer's block starts in the send buffer
  std::vector<std::uint64_t> recv_counts;  // from each peer
  std::vector<std::uint64_t> recv_displs;
  // Where the block this rank receives from each peer starts in that peer's send buffer: the data
  // check's reference (the peer's pattern at those positions).
  std::vector<std::uint64_t> source_offsets;
  std::uint64_t send_elements = 0;
  std::uint64_t recv_elements = 0;
};

// Throws std::invalid_argument when an entry is not a whole number of elements (the parsers and
// the router check that first, naming the file or the spec).
AlltoallvCounts rank_counts(const TrafficMatrix& matrix, int rank, std::uint64_t element_bytes);

// One matrix op's case on one rank (CaseSpec::matrix): the counts the backend posts and what the
// row records.
struct MatrixCase {
  TrafficMatrix matrix;     // the op's alltoallv: as given (alltoallv, moe_dispatch) or transposed (moe_combine);
                            // moe_pair: the dispatch, followed by its transpose
  AlltoallvCounts counts;   // this rank's side of `matrix`
  AlltoallvCounts combine;  // moe_pair: this rank's side of the transpose that follows (else empty)
  MatrixLoad load;          // of everything the op moves (moe_pair: dispatch plus combine)
  nlohmann::json source;    // where the matrix came from: {"file", "sha256"} or {"moe", "seed"}
};

// `op` is alltoallv or a moe_* op; `matrix` is the file's matrix or the router's dispatch. Throws
// std::invalid_argument when an entry is not a whole number of elements.
MatrixCase matrix_case(Op op, const TrafficMatrix& matrix, int rank, std::uint64_t element_bytes);

// The case's layout in run's terms: `bytes` (S) is the mean bytes a rank sends (total / N, rounded
// down), `count` S in elements, both the same on every rank (the plan must be); the buffers are this
// rank's own counts (moe_pair's receive buffer holds the dispatch's output, then the combine's).
OpLayout matrix_layout(const MatrixCase& matrix_case, std::uint64_t element_bytes);

// An N x N CSV of bytes, row = sender: N lines of N non-negative integers separated by commas
// (spaces around them allowed, blank lines and lines starting with '#' skipped). Throws UsageError
// "PATH:LINE:COLUMN: ..." naming the line and 1-based column of a non-numeric or negative entry, a
// row of the wrong length, a count that is not a multiple of `element_bytes`; "PATH: ..." for the
// wrong number of rows for `ranks`.
TrafficMatrix parse_matrix_csv(std::string_view text, std::string_view path, int ranks, std::uint64_t element_bytes);

}  // namespace ccbench
