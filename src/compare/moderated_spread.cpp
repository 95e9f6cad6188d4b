#include "compare/moderated_spread.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ccbench::compare {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Below this the recurrence psi(x) = psi(x + 1) - 1 / x (and its derivatives) moves x up; from here
// the asymptotic series' terms used are below 1e-15 relative.
constexpr double kAsymptoticFrom = 10.0;
// A moderated df the t distribution is evaluated at when d0 is infinite (the spread then known): the
// t quantile at 1e-4 one-sided is 0.3% above the normal's there, a conservative stand-in that keeps
// the incomplete beta behind student_t_sf in its accurate range.
constexpr double kKnownSpreadDf = 1000.0;

}  // namespace

std::string_view name(Spread spread) { return spread == Spread::per_size ? "per-size" : "moderated"; }

std::optional<Spread> parse_spread(std::string_view text) {
  if (text == "per-size") return Spread::per_size;
  if (text == "moderated") return Spread::moderated;
  return std::nullopt;
}

double digamma(double x) {
  double shift = 0;
  for (; x < kAsymptoticFrom; x += 1.0) shift -= 1.0 / x;
  const double r = 1.0 / (x * x);
  return shift + std::log(x) - 0.5 / x -
         r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r * (1.0 / 132)))));
}

double trigamma(double x) {
  double shift = 0;
  for (; x < kAsymptoticFrom; x += 1.0) shift += 1.0 / (x * x);
  const double r = 1.0 / (x * x);
  return shift + 1.0 / x + 0.5 * r +
         (r / x) * (1.0 / 6 - r * (1.0 / 30 - r * (1.0 / 42 - r * (1.0 / 30 - r * (5.0 / 66)))));
}

double tetragamma(double x) {
  double shift = 0;
  for (; x < kAsymptoticFrom; x += 1.0) shift -= 2.0 / (x * x * x);
  const double r = 1.0 / (x * x);
  return shift - r / x - r * (1.0 + r * (0.5 - r * (1.0 / 6 - r * (1.0 / 6 - r * (3.0 / 10 - r * (5.0 / 6))))));
}

double inverse_trigamma(double x) {
  if (!(x > 0.0)) return kInfinity;
  if (x > 1e7) return 1.0 / std::sqrt(x);  // trigamma(y) ~ 1 / y^2 as y -> 0
  if (x < 1e-6) return 1.0 / x;            // trigamma(y) ~ 1 / y as y -> infinity
  // Newton's method on 1 / trigamma(y), which is nearly linear in y (Smyth 2004), from 0.5 + 1 / x.
  double y = 0.5 + 1.0 / x;
  for (int i = 0; i < 50; ++i) {
    const double tri = trigamma(y);
    const double step = tri * (1.0 - tri / x) / tetragamma(y);
    y += step;
    if (-step / y < 1e-8) break;
  }
  return y;
}

SpreadPrior estimate_prior(std::span<const double> variances, std::span<const double> dfs) {
  const std::size_t k = std::min(variances.size(), dfs.size());
  if (k < 2) return {};
  double mean = 0, mean_trigamma = 0;
  std::vector<double> e(k);
  for (std::size_t i = 0; i < k; ++i) {
    if (!(variances[i] > 0.0) || !(dfs[i] > 0.0)) return {};
    // log s^2 less its expectation's part from sampling: an estimate of log s0^2 + psi(d0/2) - log(d0/2).
    e[i] = std::log(variances[i]) - digamma(dfs[i] / 2.0) + std::log(dfs[i] / 2.0);
    mean += e[i];
    mean_trigamma += trigamma(dfs[i] / 2.0);
  }
  mean /= static_cast<double>(k);
  mean_trigamma /= static_cast<double>(k);
  double ss = 0;
  for (double v : e) ss += (v - mean) * (v - mean);
  // The spread of log s^2 beyond what sampling explains is psi'(d0/2).
  const double excess = ss / static_cast<double>(k - 1) - mean_trigamma;
  if (!(excess > 0.0)) return {kInfinity, std::exp(mean)};
  const double d0 = 2.0 * inverse_trigamma(excess);
  return {d0, std::exp(mean + digamma(d0 / 2.0) - std::log(d0 / 2.0))};
}

ModeratedVariance moderate(const SpreadPrior& prior, double variance, double df) {
  if (!(prior.df > 0.0)) return {variance, df};
  if (std::isinf(prior.df)) return {prior.variance, kInfinity};
  return {(prior.df * prior.variance + df * variance) / (prior.df + df), prior.df + df};
}

namespace {

struct SizeMoments {
  double nb = 0, nc = 0, mean_b = 0, mean_c = 0, ss_b = 0, ss_c = 0;
};

SizeMoments moments(const std::vector<double>& b, const std::vector<double>& c) {
  SizeMoments m;
  auto side = [](const std::vector<double>& v, double& n, double& mean, double& ss) {
    for (double x : v) {
      if (std::isnan(x)) continue;
      n += 1.0;
      mean += x;
    }
    if (n > 0) mean /= n;
    for (double x : v) {
      if (!std::isnan(x)) ss += (x - mean) * (x - mean);
    }
  };
  side(b, m.nb, m.mean_b, m.ss_b);
  side(c, m.nc, m.mean_c, m.ss_c);
  return m;
}

double finite_df(double df) { return std::min(df, kKnownSpreadDf); }

}  // namespace

ModeratedShifts moderated_shifts(const TrialLogs& logs, Spread spread) {
  ModeratedShifts out;
  const std::size_t sizes = std::min(logs.baseline.size(), logs.candidate.size());
  std::vector<SizeMoments> m;
  for (std::size_t s = 0; s < sizes; ++s) m.push_back(moments(logs.baseline[s], logs.candidate[s]));
  if (spread == Spread::per_size) {
    for (std::size_t s = 0; s < sizes; ++s) {
      std::vector<double> b, c;
      for (double x : logs.baseline[s])
        if (!std::isnan(x)) b.push_back(x);
      for (double x : logs.candidate[s])
        if (!std::isnan(x)) c.push_back(x);
      out.sizes.push_back(t_shift(b, c));
    }
    return out;
  }
  // Each prior from the sizes that have that variance.
  std::vector<double> vb, db, vc, dc, vp, dp;
  for (const auto& x : m) {
    if (x.nb >= 2) vb.push_back(x.ss_b / (x.nb - 1.0)), db.push_back(x.nb - 1.0);
    if (x.nc >= 2) vc.push_back(x.ss_c / (x.nc - 1.0)), dc.push_back(x.nc - 1.0);
    if (x.nb >= 1 && x.nc >= 1 && x.nb + x.nc >= 3) {
      vp.push_back((x.ss_b + x.ss_c) / (x.nb + x.nc - 2.0)), dp.push_back(x.nb + x.nc - 2.0);
    }
  }
  out.baseline = estimate_prior(vb, db);
  out.candidate = estimate_prior(vc, dc);
  out.pooled = estimate_prior(vp, dp);
  for (const auto& x : m) {
    if (x.nb < 1 || x.nc < 1 || x.nb + x.nc < 3) {
      out.sizes.emplace_back();
      continue;
    }
    TShift t;
    t.estimate = x.mean_b - x.mean_c;
    const ModeratedVariance pooled = moderate(out.pooled, (x.ss_b + x.ss_c) / (x.nb + x.nc - 2.0), x.nb + x.nc - 2.0);
    const double se_pooled = std::sqrt(pooled.variance * (1.0 / x.nb + 1.0 / x.nc));
    if (x.nb >= 2 && x.nc >= 2) {
      // Welch-Satterthwaite with each side's moderated variance and df (an infinite df adds nothing).
      const ModeratedVariance b = moderate(out.baseline, x.ss_b / (x.nb - 1.0), x.nb - 1.0);
      const ModeratedVariance c = moderate(out.candidate, x.ss_c / (x.nc - 1.0), x.nc - 1.0);
      const double ub = b.variance / x.nb, uc = c.variance / x.nc, se2 = ub + uc;
      const double denominator = (std::isinf(b.df) ? 0.0 : ub * ub / b.df) + (std::isinf(c.df) ? 0.0 : uc * uc / c.df);
      t.se = std::sqrt(se2);
      t.df = finite_df(denominator > 0.0 ? se2 * se2 / denominator : kInfinity);
      t.se_alt = se_pooled;
      t.df_alt = finite_df(pooled.df);
    } else {
      // One side has a single launch: the pooled t alone, as t_shift.
      t.se = se_pooled;
      t.df = finite_df(pooled.df);
    }
    out.sizes.push_back(t);
  }
  return out;
}

}  // namespace ccbench::compare
