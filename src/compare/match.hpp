// Stage 2 of compare: pool the trials of each side and pair rows by
// (op, dtype, redop, in_place, bytes, ranks). Sizes on one side only are kept in lists.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "compare/load.hpp"

namespace ccbench::compare {

struct RowKey {
  std::string op;
  std::string dtype;
  std::string redop;
  bool in_place = false;
  std::uint64_t bytes = 0;
  int ranks = 0;
  // A matrix op's traffic (alltoallv, moe_*: `run --matrix` / `--moe`): the file's SHA-256 or the
  // router's spec and seed; "" for every other row. Two matrices of the same mean size are other
  // traffic, so their rows never pool or pair. sendrecv --pattern rows: the pattern, peer group and
  // block size, so two patterns never pair either.
  std::string matrix;
  auto operator<=>(const RowKey&) const = default;
};

// Ops whose rows carry a time and no bandwidth of their own: `ccbench checkpoint`'s commit
// (checkpoint_commit: the manifest, rename and fsyncs; its bytes over that time is no rate). Pooled
// with the write rows into a claim they made a 1.5x tier pair read 2.95x (issue 27 item 13).
bool time_only_op(const std::string& op);

// RowKey::matrix of a row: from its `matrix.source` (docs/result-format.md).
std::string matrix_identity(const ResultRow& row);

// Which rows take part: ops (empty = every op but the time-only ones, which take part only when
// named) and an inclusive byte range.
struct Scope {
  std::vector<std::string> ops;
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max();
  bool contains(const std::string& op, std::uint64_t bytes) const;
};

// One side's data at one size. A trial is one pass over the plan (docs/method.md); trials from different
// files are different trials. trial_ids index the side's dense trial numbering (Matched::*_trials).
struct SideSize {
  std::vector<double> pooled;         // all samples of all trials, ascending
  std::vector<int> trial_ids;         // ascending
  std::vector<double> trial_medians;  // median of each trial's samples, same order as trial_ids
  // --statistic pNN: the level in percent, and trial_medians hold each trial's pNN instead (the
  // type-7 quantile of its samples, as the row's percentiles_us).
  std::optional<double> percentile;
  bool summary = false;               // samples are imported summaries, not measured iterations
  std::size_t rows = 0;
  std::size_t rows_ci_not_met = 0;
  std::uint64_t wrong = 0;
  std::string backend;
};

struct MatchedSize {
  RowKey key;
  SideSize base;
  SideSize cand;
};

struct Matched {
  std::vector<MatchedSize> sizes;  // sorted by key
  std::vector<RowKey> only_in_baseline;
  std::vector<RowKey> only_in_candidate;
  int baseline_trials = 0;  // distinct (file, trial) pairs of rows in scope
  int candidate_trials = 0;
  std::size_t time_only_left_out = 0;  // rows of time_only_op ops the default scope left out, both sides
};

// `row_percentile` (--statistic pNN): every row in scope must carry percentiles_us.pNN (UsageError
// naming the file and row otherwise) and each trial is reduced to its pNN instead of its median.
Matched match_sides(const Side& baseline, const Side& candidate, const Scope& scope,
                    std::optional<double> row_percentile = std::nullopt);

}  // namespace ccbench::compare
