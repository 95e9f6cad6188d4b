#include "checkpoint/durable_time.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace ccbench::checkpoint {
namespace {

bool valid(double s) { return std::isfinite(s) && s >= 0; }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

PhaseTiming time_to_durable(std::span<const RankPhases> ranks, double commit_s, std::uint64_t bytes) {
  if (!valid(commit_s)) throw std::invalid_argument("commit time is negative or not finite");
  PhaseTiming t;
  double first_start = std::numeric_limits<double>::infinity();
  double last_end = -std::numeric_limits<double>::infinity();
  std::vector<double> durations;
  for (const auto& r : ranks) {
    if (!r.writes) continue;
    for (double s : {r.start_s, r.open_s, r.io_s, r.fsync_s, r.close_s, r.end_s}) {
      if (!valid(s)) throw std::invalid_argument("rank " + std::to_string(r.rank) + ": a phase time is negative");
    }
    if (r.end_s < r.start_s) throw std::invalid_argument("rank " + std::to_string(r.rank) + ": ends before it starts");
    first_start = std::min(first_start, r.start_s);
    last_end = std::max(last_end, r.end_s);
    const double d = r.end_s - r.start_s;
    durations.push_back(d);
    if (d > t.slowest_s || t.slowest_rank < 0) {
      t.slowest_s = d;
      t.slowest_rank = r.rank;
      t.slowest_host = r.host;
    }
  }
  if (durations.empty()) throw std::invalid_argument("no rank writes");
  t.ranks_s = last_end - first_start;
  t.commit_s = commit_s;
  t.time_to_durable_s = t.ranks_s + commit_s;
  t.throughput_gbps = t.time_to_durable_s > 0 ? static_cast<double>(bytes) / t.time_to_durable_s / 1e9 : 0.0;
  t.median_rank_s = median(durations);
  t.tail_ratio = t.median_rank_s > 0 ? t.slowest_s / t.median_rank_s : 1.0;
  return t;
}

}  // namespace ccbench::checkpoint
