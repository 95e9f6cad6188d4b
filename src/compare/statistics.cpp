#include "compare/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace ccbench::compare {
namespace {

struct RankSums {
  double rank_sum_x = 0;
  double tie_term = 0;  // sum over tie groups of t^3 - t
  bool ties = false;
};

RankSums rank_sums(std::span<const double> x, std::span<const double> y) {
  struct Item {
    double v;
    bool from_x;
  };
  std::vector<Item> all;
  all.reserve(x.size() + y.size());
  for (double v : x) all.push_back({v, true});
  for (double v : y) all.push_back({v, false});
  std::sort(all.begin(), all.end(), [](const Item& a, const Item& b) { return a.v < b.v; });
  RankSums r;
  std::size_t i = 0;
  while (i < all.size()) {
    std::size_t j = i + 1;
    while (j < all.size() && all[j].v == all[i].v) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k) {
      if (all[k].from_x) r.rank_sum_x += mid_rank;
    }
    if (t > 1) {
      r.ties = true;
      r.tie_term += t * t * t - t;
    }
    i = j;
  }
  return r;
}

// Null distribution of U for sizes (n, m) as probabilities P(U = u), u = 0..n*m, from the
// recurrence P[i][j](u) = i/(i+j) P[i-1][j](u-j) + j/(i+j) P[i][j-1](u): the largest of the i+j
// values belongs to x with probability i/(i+j) and then beats all j values of y. Every term is a
// probability, so nothing cancels.
std::vector<double> exact_distribution(std::size_t n, std::size_t m) {
  thread_local std::map<std::pair<std::size_t, std::size_t>, std::vector<double>> cache;
  const auto key = std::pair{n, m};
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  std::vector<std::vector<double>> prev(m + 1, std::vector<double>{1.0});  // i = 0: U = 0
  for (std::size_t i = 1; i <= n; ++i) {
    std::vector<std::vector<double>> cur(m + 1);
    cur[0] = {1.0};
    for (std::size_t j = 1; j <= m; ++j) {
      std::vector<double> d(i * j + 1, 0.0);
      const double wx = static_cast<double>(i) / static_cast<double>(i + j);
      const double wy = 1.0 - wx;
      const auto& a = prev[j];     // (i-1, j), shifted by j
      const auto& b = cur[j - 1];  // (i, j-1)
      for (std::size_t u = 0; u < a.size(); ++u) d[u + j] += wx * a[u];
      for (std::size_t u = 0; u < b.size(); ++u) d[u] += wy * b[u];
      cur[j] = std::move(d);
    }
    prev = std::move(cur);
  }
  if (cache.size() > 64) cache.clear();
  cache[key] = prev[m];
  return prev[m];
}

}  // namespace

double normal_sf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

double normal_quantile(double p) {
  if (!(p > 0.0)) return -std::numeric_limits<double>::infinity();
  if (!(p < 1.0)) return std::numeric_limits<double>::infinity();
  // Bisection on the upper tail, then Newton polish: accurate to double precision, called rarely.
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-15; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (1.0 - normal_sf(mid) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

double mann_whitney_exact_cdf(std::size_t n, std::size_t m, std::size_t u) {
  const auto dist = exact_distribution(n, m);
  double total = 0;
  for (std::size_t i = 0; i <= u && i < dist.size(); ++i) total += dist[i];
  return std::min(total, 1.0);
}

MannWhitney mann_whitney_asymptotic(std::span<const double> x, std::span<const double> y) {
  MannWhitney r;
  if (x.empty() || y.empty()) return r;
  const double n1 = static_cast<double>(x.size());
  const double n2 = static_cast<double>(y.size());
  const RankSums rs = rank_sums(x, y);
  r.u_x = rs.rank_sum_x - n1 * (n1 + 1) / 2.0;
  const double u = std::max(r.u_x, n1 * n2 - r.u_x);
  const double n = n1 + n2;
  const double mu = n1 * n2 / 2.0;
  const double var = n1 * n2 / 12.0 * ((n + 1.0) - rs.tie_term / (n * (n - 1.0)));
  if (!(var > 0.0)) {
    r.p_value = 1.0;
    return r;
  }
  const double z = (u - mu - 0.5) / std::sqrt(var);
  r.p_value = std::clamp(2.0 * normal_sf(z), 0.0, 1.0);
  return r;
}

MannWhitney mann_whitney_exact(std::span<const double> x, std::span<const double> y) {
  MannWhitney r;
  r.exact = true;
  if (x.empty() || y.empty()) return r;
  const double n1 = static_cast<double>(x.size());
  const double n2 = static_cast<double>(y.size());
  const RankSums rs = rank_sums(x, y);
  r.u_x = rs.rank_sum_x - n1 * (n1 + 1) / 2.0;
  // Two-sided: twice the upper tail of the larger U (scipy's convention), capped at 1.
  const double u = std::max(r.u_x, n1 * n2 - r.u_x);
  const auto dist = exact_distribution(x.size(), y.size());
  const auto u_int = static_cast<std::size_t>(std::ceil(u - 1e-9));
  double sf = 0;
  for (std::size_t i = u_int; i < dist.size(); ++i) sf += dist[i];
  r.p_value = std::clamp(2.0 * sf, 0.0, 1.0);
  return r;
}

MannWhitney mann_whitney(std::span<const double> x, std::span<const double> y) {
  if (x.empty() || y.empty()) return {};
  if (x.size() * y.size() <= kExactMaxProduct && !rank_sums(x, y).ties) return mann_whitney_exact(x, y);
  return mann_whitney_asymptotic(x, y);
}

double kth_pairwise_difference(std::span<const double> x, std::span<const double> y, std::uint64_t k) {
  const std::size_t n = x.size(), m = y.size();
  if (n == 0 || m == 0 || k == 0) return std::numeric_limits<double>::quiet_NaN();
  k = std::min<std::uint64_t>(k, static_cast<std::uint64_t>(n) * m);
  // count(d) = #{(i, j) : x_i - y_j <= d}: for ascending x the threshold x_i - d rises, so the
  // first y_j >= threshold only moves forward.
  auto count = [&](double d) {
    std::uint64_t c = 0;
    std::size_t p = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double t = x[i] - d;
      while (p < m && y[p] < t) ++p;
      c += m - p;
    }
    return c;
  };
  // Largest difference <= d: for each i the smallest y_j >= x_i - d.
  auto largest_at_most = [&](double d) {
    double best = -std::numeric_limits<double>::infinity();
    std::size_t p = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double t = x[i] - d;
      while (p < m && y[p] < t) ++p;
      if (p < m) best = std::max(best, x[i] - y[p]);
    }
    return best;
  };
  double lo = x.front() - y.back();
  double hi = x.back() - y.front();
  if (count(lo) >= k) return lo;
  for (int iter = 0; iter < 300; ++iter) {
    const double mid = lo + (hi - lo) / 2.0;
    if (!(mid > lo && mid < hi)) break;
    const std::uint64_t c = count(mid);
    if (c >= k) {
      hi = mid;
      if (c == k) break;  // the k-th is then the largest difference <= mid
    } else {
      lo = mid;
    }
  }
  return largest_at_most(hi);
}

std::uint64_t mann_whitney_ci_rank(std::size_t n, std::size_t m, double confidence) {
  if (n == 0 || m == 0) return 0;
  const double alpha_half = (1.0 - confidence) / 2.0;
  const std::uint64_t nm = static_cast<std::uint64_t>(n) * m;
  if (nm <= kExactMaxProduct) {
    const auto dist = exact_distribution(n, m);
    // Largest k with P(U <= k-1) <= alpha/2.
    double cdf = 0;
    std::uint64_t k = 0;
    for (std::size_t u = 0; u < dist.size(); ++u) {
      cdf += dist[u];
      if (cdf > alpha_half * (1.0 + 1e-12)) break;
      k = u + 1;
    }
    if (k == 0 || 2 * k > nm + 1) return 0;
    return k;
  }
  const double z = normal_quantile(1.0 - alpha_half);
  const double mu = static_cast<double>(nm) / 2.0;
  const double sd = std::sqrt(static_cast<double>(nm) * static_cast<double>(n + m + 1) / 12.0);
  const double k = std::floor(mu - z * sd);  // normal approximation of the critical value
  if (k < 1.0) return 0;
  return static_cast<std::uint64_t>(k);
}

ShiftEstimate hodges_lehmann(std::span<const double> x, std::span<const double> y, double confidence) {
  ShiftEstimate r;
  if (x.empty() || y.empty()) {
    r.estimate = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  std::vector<double> xs(x.begin(), x.end()), ys(y.begin(), y.end());
  std::sort(xs.begin(), xs.end());
  std::sort(ys.begin(), ys.end());
  const std::uint64_t nm = static_cast<std::uint64_t>(xs.size()) * ys.size();
  if (nm % 2 == 1) {
    r.estimate = kth_pairwise_difference(xs, ys, (nm + 1) / 2);
  } else {
    r.estimate = 0.5 * (kth_pairwise_difference(xs, ys, nm / 2) + kth_pairwise_difference(xs, ys, nm / 2 + 1));
  }
  const std::uint64_t k = mann_whitney_ci_rank(xs.size(), ys.size(), confidence);
  if (k > 0) {
    r.ci = std::pair{kth_pairwise_difference(xs, ys, k), kth_pairwise_difference(xs, ys, nm + 1 - k)};
  }
  return r;
}

double incomplete_beta(double x, double a, double b) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  // Continued fraction (modified Lentz), on the side where it converges fast.
  if (x > (a + 1.0) / (a + b + 2.0)) return 1.0 - incomplete_beta(1.0 - x, b, a);
  const double log_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double tiny = 1e-300;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::abs(d) < tiny) d = tiny;
  d = 1.0 / d;
  double f = d;
  for (int m = 1; m <= 500; ++m) {
    const double dm = static_cast<double>(m);
    double num = dm * (b - dm) * x / ((a + 2 * dm - 1) * (a + 2 * dm));
    d = 1.0 + num * d;
    c = 1.0 + num / c;
    if (std::abs(d) < tiny) d = tiny;
    if (std::abs(c) < tiny) c = tiny;
    d = 1.0 / d;
    f *= c * d;
    num = -(a + dm) * (a + b + dm) * x / ((a + 2 * dm) * (a + 2 * dm + 1));
    d = 1.0 + num * d;
    c = 1.0 + num / c;
    if (std::abs(d) < tiny) d = tiny;
    if (std::abs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = c * d;
    f *= delta;
    if (std::abs(delta - 1.0) < 1e-15) break;
  }
  return std::exp(log_front) * f / a;
}

double student_t_sf(double t, double df) {
  const double tail = 0.5 * incomplete_beta(df / (df + t * t), df / 2.0, 0.5);
  return t >= 0 ? tail : 1.0 - tail;
}

WelchT welch_t_test(std::span<const double> x, std::span<const double> y) {
  WelchT r;
  if (x.size() < 2 || y.size() < 2) return r;
  auto moments = [](std::span<const double> v) {
    double mean = 0;
    for (double e : v) mean += e;
    mean /= static_cast<double>(v.size());
    double ss = 0;
    for (double e : v) ss += (e - mean) * (e - mean);
    return std::pair{mean, ss / static_cast<double>(v.size() - 1)};
  };
  const auto [mx, vx] = moments(x);
  const auto [my, vy] = moments(y);
  const double nx = static_cast<double>(x.size()), ny = static_cast<double>(y.size());
  const double se2 = vx / nx + vy / ny;
  if (!(se2 > 0.0)) {
    r.p_value = mx == my ? 1.0 : 0.0;  // no spread at all: the difference is exact
    r.t = mx == my ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), mx - my);
    return r;
  }
  r.t = (mx - my) / std::sqrt(se2);
  r.df = se2 * se2 / ((vx / nx) * (vx / nx) / (nx - 1.0) + (vy / ny) * (vy / ny) / (ny - 1.0));
  r.p_value = std::clamp(2.0 * student_t_sf(std::abs(r.t), r.df), 0.0, 1.0);
  return r;
}

std::vector<double> holm_adjust(std::span<const double> p) {
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<double> adjusted(m, 1.0);
  double running = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const double v = std::min(1.0, static_cast<double>(m - i) * p[order[i]]);
    running = std::max(running, v);
    adjusted[order[i]] = running;
  }
  return adjusted;
}

double percentile_inplace(std::vector<double>& values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  q = std::clamp(q, 0.0, 1.0);
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const double frac = pos - static_cast<double>(lo);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lo), values.end());
  const double a = values[lo];
  if (frac == 0.0 || lo + 1 >= values.size()) return a;
  const double b = *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, values.end());
  return a + (b - a) * frac;
}

}  // namespace ccbench::compare
