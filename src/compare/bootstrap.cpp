#include "compare/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <thread>

namespace ccbench::compare {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double median_inplace(std::vector<double>& v) {
  const std::size_t n = v.size();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2 == 1) return *mid;
  return 0.5 * (*mid + *std::max_element(v.begin(), mid));
}

}  // namespace

double trial_log_ratio(const TrialTable& t, std::size_t size, const std::vector<int>& base_draw,
                       const std::vector<int>& cand_draw, std::vector<double>& scratch) {
  const auto& b = t.baseline_log[size];
  const auto& c = t.candidate_log[size];
  scratch.clear();
  for (int i : base_draw) {
    const double lb = b[static_cast<std::size_t>(i)];
    if (std::isnan(lb)) continue;
    for (int j : cand_draw) {
      const double lc = c[static_cast<std::size_t>(j)];
      if (!std::isnan(lc)) scratch.push_back(lb - lc);
    }
  }
  if (scratch.empty()) return std::numeric_limits<double>::quiet_NaN();
  return median_inplace(scratch);
}

TrialEstimates bootstrap_trials(const TrialTable& table, int resamples, std::uint64_t seed) {
  TrialEstimates out;
  const std::size_t sizes = table.baseline_log.size();
  if (sizes == 0) return out;
  std::vector<int> all_b(static_cast<std::size_t>(table.baseline_trials));
  std::vector<int> all_c(static_cast<std::size_t>(table.candidate_trials));
  std::iota(all_b.begin(), all_b.end(), 0);
  std::iota(all_c.begin(), all_c.end(), 0);
  std::vector<double> scratch;
  out.size_log_ratio.resize(sizes);
  double sum = 0;
  out.max_log = -std::numeric_limits<double>::infinity();
  for (std::size_t s = 0; s < sizes; ++s) {
    out.size_log_ratio[s] = trial_log_ratio(table, s, all_b, all_c, scratch);
    sum += out.size_log_ratio[s];
    if (out.size_log_ratio[s] > out.max_log) {
      out.max_log = out.size_log_ratio[s];
      out.argmax = s;
    }
  }
  out.geomean_log = sum / static_cast<double>(sizes);
  if (resamples <= 0) return out;
  out.geomean_replicates.resize(static_cast<std::size_t>(resamples));
  out.max_replicates.resize(static_cast<std::size_t>(resamples));
  auto run = [&](int first, int step) {
    std::vector<int> draw_b(all_b.size()), draw_c(all_c.size());
    std::vector<double> local;
    local.reserve(all_b.size() * all_c.size());
    for (int r = first; r < resamples; r += step) {
      std::uint64_t state = seed ^ (0xD1B54A32D192ED03ULL * static_cast<std::uint64_t>(r + 1));
      for (auto& d : draw_b) d = static_cast<int>(splitmix64(state) % all_b.size());
      for (auto& d : draw_c) d = static_cast<int>(splitmix64(state) % all_c.size());
      double total = 0, best = -std::numeric_limits<double>::infinity();
      for (std::size_t s = 0; s < sizes; ++s) {
        double v = trial_log_ratio(table, s, draw_b, draw_c, local);
        if (std::isnan(v)) v = out.size_log_ratio[s];  // no drawn trial reached this size
        total += v;
        best = std::max(best, v);
      }
      out.geomean_replicates[static_cast<std::size_t>(r)] = total / static_cast<double>(sizes);
      out.max_replicates[static_cast<std::size_t>(r)] = best;
    }
  };
  const int workers = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; ++w) threads.emplace_back(run, w, workers);
  run(0, workers);
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace ccbench::compare
