// Issue 27 item 19: the time left weighs each size by its bytes, so the first, small sizes of a sweep
// no longer promise that the large ones will be as quick (the count of cases said "~5 s left" at the
// start of a 19 s sweep).
#include "report/progress_line.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ccbench::report {
namespace {

ResultRow row_of(std::uint64_t bytes) {
  ResultRow r;
  r.op = "allreduce";
  r.bytes = bytes;
  r.time_us.median = 1.0;
  r.samples_us = {1.0, 1.0};
  r.batch = 1;
  return r;
}

std::string time_left(const std::string& line) { return line.substr(line.rfind('|') + 2); }

TEST(ProgressLine, TimeLeftWeighsTheRemainingSizesByTheirBytes) {
  const std::vector<std::uint64_t> sizes{1024, 64ULL << 20};
  double total = 0;
  for (auto b : sizes) total += progress_weight(b);
  ProgressLine progress(sizes.size(), total, 1);
  // 2 s for 1 KiB: the 64 MiB left weighs (64 + 4) MiB against (1 KiB + 4 MiB) done, 17x: ~34 s,
  // where counting cases said ~2 s.
  EXPECT_EQ(time_left(progress.on_result(row_of(1024), 2.0)), "2 s elapsed, ~34 s left\n");
  EXPECT_EQ(time_left(progress.on_result(row_of(64ULL << 20), 30.0)), "30 s elapsed, ~0 s left\n");
}

TEST(ProgressLine, EqualSizesAreEqualShares) {
  const double total = 4 * progress_weight(8);
  ProgressLine progress(4, total, 2);
  ResultRow r = row_of(8);
  r.trial = 1;
  const std::string line = progress.on_result(r, 3.0);
  EXPECT_EQ(line.rfind("[1/4] allreduce 8 out-of-place trial 2/2: ", 0), 0u) << line;
  EXPECT_EQ(time_left(line), "3 s elapsed, ~9 s left\n");
}

TEST(ProgressLine, RowsBeyondThePlanNeverGiveANegativeTimeLeft) {
  ProgressLine progress(1, progress_weight(8), 1);
  EXPECT_EQ(time_left(progress.on_result(row_of(1 << 20), 1.0)), "1 s elapsed, ~0 s left\n");
}

}  // namespace
}  // namespace ccbench::report
