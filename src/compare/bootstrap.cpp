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

namespace {

// One size's pairwise log-ratio differences, sorted once; a replicate's Hodges-Lehmann estimate is
// then the weighted median of this list with weights (times trial i drawn) x (times trial j drawn),
// which equals the median of the expanded multiset without building it.
struct SortedPairs {
  std::vector<double> d;
  std::vector<std::uint32_t> i, j;
};

SortedPairs sorted_pairs(const TrialTable& t, std::size_t size) {
  struct P {
    double d;
    std::uint32_t i, j;
  };
  std::vector<P> pairs;
  const auto& b = t.baseline_log[size];
  const auto& c = t.candidate_log[size];
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (std::isnan(b[i])) continue;
    for (std::size_t j = 0; j < c.size(); ++j) {
      if (!std::isnan(c[j]))
        pairs.push_back({b[i] - c[j], static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j)});
    }
  }
  std::sort(pairs.begin(), pairs.end(), [](const P& x, const P& y) { return x.d < y.d; });
  SortedPairs out;
  for (const auto& p : pairs) {
    out.d.push_back(p.d);
    out.i.push_back(p.i);
    out.j.push_back(p.j);
  }
  return out;
}

double weighted_median(const SortedPairs& p, const std::vector<std::uint32_t>& wb, const std::vector<std::uint32_t>& wc,
                       std::uint64_t total) {
  // Median of `total` values: the (total+1)/2-th, averaged with the (total/2+1)-th when even (1-based).
  const std::uint64_t lo_rank = (total + 1) / 2, hi_rank = total / 2 + 1;
  std::uint64_t cum = 0;
  double lo = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t k = 0; k < p.d.size(); ++k) {
    cum += static_cast<std::uint64_t>(wb[p.i[k]]) * wc[p.j[k]];
    if (std::isnan(lo) && cum >= lo_rank) lo = p.d[k];
    if (cum >= hi_rank) return 0.5 * (lo + p.d[k]);
  }
  return lo;
}

}  // namespace

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
  std::vector<SortedPairs> pairs(sizes);
  // Which trials have data at each size (to weigh only those present).
  std::vector<std::vector<bool>> present_b(sizes), present_c(sizes);
  for (std::size_t s = 0; s < sizes; ++s) {
    pairs[s] = sorted_pairs(table, s);
    for (double v : table.baseline_log[s]) present_b[s].push_back(!std::isnan(v));
    for (double v : table.candidate_log[s]) present_c[s].push_back(!std::isnan(v));
  }
  out.geomean_replicates.resize(static_cast<std::size_t>(resamples));
  out.max_replicates.resize(static_cast<std::size_t>(resamples));
  auto run = [&](int first, int step) {
    std::vector<std::uint32_t> wb(all_b.size()), wc(all_c.size());
    for (int r = first; r < resamples; r += step) {
      std::uint64_t state = seed ^ (0xD1B54A32D192ED03ULL * static_cast<std::uint64_t>(r + 1));
      std::fill(wb.begin(), wb.end(), 0u);
      std::fill(wc.begin(), wc.end(), 0u);
      for (std::size_t k = 0; k < all_b.size(); ++k) ++wb[splitmix64(state) % all_b.size()];
      for (std::size_t k = 0; k < all_c.size(); ++k) ++wc[splitmix64(state) % all_c.size()];
      double total = 0, best = -std::numeric_limits<double>::infinity();
      for (std::size_t s = 0; s < sizes; ++s) {
        std::uint64_t nb = 0, nc = 0;
        for (std::size_t i = 0; i < wb.size(); ++i) nb += present_b[s][i] ? wb[i] : 0;
        for (std::size_t j = 0; j < wc.size(); ++j) nc += present_c[s][j] ? wc[j] : 0;
        // No drawn trial reached this size: keep its point estimate.
        const double v = nb == 0 || nc == 0 ? out.size_log_ratio[s] : weighted_median(pairs[s], wb, wc, nb * nc);
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
