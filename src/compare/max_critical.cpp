#include "compare/max_critical.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "compare/statistics.hpp"

namespace ccbench::compare {

namespace {

// Standard normal draws from mt19937_64 by Box-Muller: std::normal_distribution differs between
// standard libraries, this does not.
class Normals {
 public:
  explicit Normals(std::uint64_t seed) : rng_(seed) {}
  double next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = (static_cast<double>(rng_() >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2.0 * std::numbers::pi * u2);
    has_spare_ = true;
    return r * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  std::mt19937_64 rng_;
  double spare_ = 0;
  bool has_spare_ = false;
};

// Centred deviations of one side at one size, divided by the count present (NaN -> 0: a missing
// trial contributes nothing at that size).
std::vector<double> scaled_deviations(const std::vector<double>& row, double& sum_sq) {
  double mean = 0;
  int n = 0;
  for (double v : row) {
    if (!std::isnan(v)) {
      mean += v;
      ++n;
    }
  }
  std::vector<double> out(row.size(), 0.0);
  sum_sq = 0;
  if (n < 2) return out;
  mean /= n;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (std::isnan(row[i])) continue;
    out[i] = (row[i] - mean) / n;
    sum_sq += out[i] * out[i];
  }
  return out;
}

}  // namespace

double MaxCritical::per_size_level(double tail) const {
  if (sizes <= 1) return tail;
  if (maxima.empty()) return tail / static_cast<double>(sizes);  // no resampling (--resamples 0): Bonferroni
  // A conservative order statistic: the ceil((1 - tail)(B + 1))-th of B maxima.
  const auto b = static_cast<double>(maxima.size());
  const auto k = static_cast<std::size_t>(std::ceil((1.0 - tail) * (b + 1.0)));
  const double c = maxima[std::min(maxima.size(), std::max<std::size_t>(k, 1)) - 1];
  return std::clamp(normal_sf(c), tail / static_cast<double>(sizes), tail);
}

MaxCritical max_critical(const TrialLogs& logs, int resamples, std::uint64_t seed) {
  MaxCritical out;
  const std::size_t sizes = std::min(logs.baseline.size(), logs.candidate.size());
  if (sizes == 0) return out;
  const std::size_t nb = logs.baseline.front().size(), nc = logs.candidate.front().size();
  // Per size, each launch's weight on the standardised estimate: (centred deviation / n) / sd.
  std::vector<std::vector<double>> wb, wc;
  for (std::size_t s = 0; s < sizes; ++s) {
    double ssb = 0, ssc = 0;
    auto db = scaled_deviations(logs.baseline[s], ssb);
    auto dc = scaled_deviations(logs.candidate[s], ssc);
    const double sd = std::sqrt(ssb + ssc);
    if (!(sd > 0.0)) continue;
    for (auto& v : db) v /= sd;
    for (auto& v : dc) v /= sd;
    wb.push_back(std::move(db));
    wc.push_back(std::move(dc));
  }
  out.sizes = wb.size();
  if (out.sizes == 0 || resamples <= 0) return out;
  Normals normal(seed);
  std::vector<double> g(nb), h(nc);
  out.maxima.reserve(static_cast<std::size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    for (auto& v : g) v = normal.next();
    for (auto& v : h) v = normal.next();
    double best = -std::numeric_limits<double>::infinity();
    for (std::size_t s = 0; s < out.sizes; ++s) {
      double z = 0;
      for (std::size_t i = 0; i < nb; ++i) z += g[i] * wb[s][i];
      for (std::size_t j = 0; j < nc; ++j) z -= h[j] * wc[s][j];
      best = std::max(best, z);
    }
    out.maxima.push_back(best);
  }
  std::sort(out.maxima.begin(), out.maxima.end());
  return out;
}

std::pair<double, double> max_interval(std::span<const TShift> sizes, double lower_level, double upper_level) {
  double lo = -std::numeric_limits<double>::infinity(), hi = lo;
  for (const auto& s : sizes) {
    lo = std::max(lo, s.estimate - s.width(1.0 - lower_level));
    hi = std::max(hi, s.estimate + s.width(1.0 - upper_level));
  }
  return {lo, hi};
}

}  // namespace ccbench::compare
