#include "compare/trial_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compare/statistics.hpp"

namespace ccbench::compare {

double student_t_quantile(double p, double df) {
  if (!(p > 0.0)) return -std::numeric_limits<double>::infinity();
  if (!(p < 1.0)) return std::numeric_limits<double>::infinity();
  if (p < 0.5) return -student_t_quantile(1.0 - p, df);
  if (p == 0.5) return 0.0;
  const double tail = 1.0 - p;
  double hi = 1.0;
  while (student_t_sf(hi, df) > tail && hi < 1e12) hi *= 2.0;
  double lo = 0.0;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(1.0, hi); ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_sf(mid, df) > tail ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double TShift::width(double p) const {
  double w = se > 0.0 ? student_t_quantile(p, df) * se : 0.0;
  if (se_alt > 0.0) w = std::max(w, student_t_quantile(p, df_alt) * se_alt);
  return w;
}

std::pair<double, double> TShift::interval(double confidence) const {
  const double w = width(0.5 + confidence / 2.0);
  return {estimate - w, estimate + w};
}

double TShift::p_below(double bound) const {
  if (!(se > 0.0)) return estimate < bound ? 0.0 : 1.0;
  // P(T <= (estimate - bound) / se) under H0 at the boundary; the larger of the two tests.
  double p = student_t_sf((bound - estimate) / se, df);
  if (se_alt > 0.0) p = std::max(p, student_t_sf((bound - estimate) / se_alt, df_alt));
  return std::clamp(p, 0.0, 1.0);
}

double TShift::p_above(double bound) const {
  if (!(se > 0.0)) return estimate > bound ? 0.0 : 1.0;
  double p = student_t_sf((estimate - bound) / se, df);
  if (se_alt > 0.0) p = std::max(p, student_t_sf((estimate - bound) / se_alt, df_alt));
  return std::clamp(p, 0.0, 1.0);
}

double TShift::p_two_sided(double bound) const {
  if (!(se > 0.0)) return estimate == bound ? 1.0 : 0.0;
  double p = 2.0 * student_t_sf(std::abs(estimate - bound) / se, df);
  if (se_alt > 0.0) p = std::max(p, 2.0 * student_t_sf(std::abs(estimate - bound) / se_alt, df_alt));
  return std::clamp(p, 0.0, 1.0);
}

namespace {

std::pair<double, double> mean_ss(std::span<const double> v) {
  double mean = 0;
  for (double e : v) mean += e;
  mean /= static_cast<double>(v.size());
  double ss = 0;
  for (double e : v) ss += (e - mean) * (e - mean);
  return {mean, ss};
}

}  // namespace

std::optional<TShift> t_shift(std::span<const double> x, std::span<const double> y) {
  const std::size_t n = x.size(), m = y.size();
  if (n == 0 || m == 0 || (n < 2 && m < 2)) return std::nullopt;
  const auto [mx, ssx] = mean_ss(x);
  const auto [my, ssy] = mean_ss(y);
  const double nx = static_cast<double>(n), ny = static_cast<double>(m);
  TShift s;
  s.estimate = mx - my;
  if (n >= 2 && m >= 2) {
    const double vx = ssx / (nx - 1.0) / nx, vy = ssy / (ny - 1.0) / ny;
    const double se2 = vx + vy;
    s.se = std::sqrt(se2);
    s.df = se2 > 0.0 ? se2 * se2 / (vx * vx / (nx - 1.0) + vy * vy / (ny - 1.0)) : nx + ny - 2.0;
    const double pooled = (ssx + ssy) / (nx + ny - 2.0);
    s.se_alt = std::sqrt(pooled * (1.0 / nx + 1.0 / ny));
    s.df_alt = nx + ny - 2.0;
  } else {
    // One side has a single trial: its variance is unknown, so assume the launch-to-launch variance
    // is the same on both sides (true for an A/A comparison) and pool it.
    const double var = (ssx + ssy) / (nx + ny - 2.0);
    s.se = std::sqrt(var * (1.0 / nx + 1.0 / ny));
    s.df = nx + ny - 2.0;
  }
  return s;
}

std::vector<double> trial_deviations(const std::vector<std::vector<double>>& side_logs) {
  if (side_logs.empty()) return {};
  const std::size_t trials = side_logs.front().size();
  std::vector<double> sum(trials, 0.0);
  std::vector<int> count(trials, 0);
  for (const auto& row : side_logs) {
    double mean = 0;
    int present = 0;
    for (double v : row) {
      if (!std::isnan(v)) {
        mean += v;
        ++present;
      }
    }
    if (present == 0) continue;
    mean /= present;
    for (std::size_t t = 0; t < row.size() && t < trials; ++t) {
      if (std::isnan(row[t])) continue;
      sum[t] += row[t] - mean;
      ++count[t];
    }
  }
  std::vector<double> out;
  out.reserve(trials);
  for (std::size_t t = 0; t < trials; ++t) {
    if (count[t] > 0) out.push_back(sum[t] / count[t]);
  }
  return out;
}

GeomeanEstimate geomean_shift(const TrialLogs& logs) {
  GeomeanEstimate g;
  const std::size_t sizes = std::min(logs.baseline.size(), logs.candidate.size());
  if (sizes == 0) return g;
  auto mean_present = [](const std::vector<double>& row) {
    double sum = 0;
    int n = 0;
    for (double v : row) {
      if (!std::isnan(v)) {
        sum += v;
        ++n;
      }
    }
    return n > 0 ? sum / n : std::numeric_limits<double>::quiet_NaN();
  };
  double total = 0;
  int counted = 0;
  for (std::size_t s = 0; s < sizes; ++s) {
    const double d = mean_present(logs.baseline[s]) - mean_present(logs.candidate[s]);
    if (std::isnan(d)) continue;
    total += d;
    ++counted;
  }
  if (counted == 0) return g;
  g.estimate = total / counted;
  const auto rb = trial_deviations(logs.baseline);
  const auto rc = trial_deviations(logs.candidate);
  g.shift = t_shift(rb, rc);
  if (g.shift) g.shift->estimate = g.estimate;
  return g;
}

namespace {

// The slope's two-sided t test with `df` degrees of freedom, from the residual sum of squares.
Trend with_p_value(Trend t, double sse, double df, double sxx) {
  const double se = std::sqrt(sse / df / sxx);
  t.p_value =
      se > 0.0 ? std::clamp(2.0 * student_t_sf(std::abs(t.slope) / se, df), 0.0, 1.0) : (t.slope == 0.0 ? 1.0 : 0.0);
  return t;
}

}  // namespace

std::optional<Trend> linear_trend(std::span<const double> v) {
  const std::size_t n = v.size();
  if (n < 4) return std::nullopt;
  const double xbar = (static_cast<double>(n) - 1.0) / 2.0;
  double ybar = 0;
  for (double e : v) ybar += e;
  ybar /= static_cast<double>(n);
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = static_cast<double>(i) - xbar;
    sxx += dx * dx;
    sxy += dx * (v[i] - ybar);
  }
  Trend t;
  t.n = n;
  t.slope = sxy / sxx;
  double sse = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = v[i] - ybar - t.slope * (static_cast<double>(i) - xbar);
    sse += r * r;
  }
  return with_p_value(t, sse, static_cast<double>(n) - 2.0, sxx);
}

std::optional<Trend> common_trend(std::span<const double> a, std::span<const double> b) {
  double sxx = 0, sxy = 0, syy = 0;
  std::size_t n = 0, groups = 0;
  for (const auto v : {a, b}) {
    if (v.size() < 3) continue;
    ++groups;
    n += v.size();
    const double xbar = (static_cast<double>(v.size()) - 1.0) / 2.0;
    double ybar = 0;
    for (double e : v) ybar += e;
    ybar /= static_cast<double>(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double dx = static_cast<double>(i) - xbar, dy = v[i] - ybar;
      sxx += dx * dx;
      sxy += dx * dy;
      syy += dy * dy;
    }
  }
  if (n < 5 || groups == 0) return std::nullopt;
  Trend t;
  t.n = n;
  t.slope = sxy / sxx;
  const double sse = std::max(0.0, syy - t.slope * sxy);
  return with_p_value(t, sse, static_cast<double>(n) - static_cast<double>(groups) - 1.0, sxx);
}

}  // namespace ccbench::compare
