#include "screen/judge.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <utility>

#include "compare/statistics.hpp"
#include "compare/trial_stats.hpp"
#include "core/stats.hpp"

namespace ccbench::screen {

double median_se_factor(int n) {
  // sd(median of n standard normals) * sqrt(n), 200,000 draws each (numpy, seed 7); n = 1 ... 40.
  static constexpr std::array<double, 40> measured = {
      1.000, 1.000, 1.158, 1.093, 1.197, 1.139, 1.216, 1.165, 1.221, 1.176, 1.228, 1.191, 1.231, 1.195,
      1.234, 1.203, 1.236, 1.204, 1.236, 1.213, 1.245, 1.215, 1.242, 1.222, 1.240, 1.221, 1.244, 1.222,
      1.242, 1.229, 1.246, 1.229, 1.246, 1.226, 1.245, 1.228, 1.245, 1.231, 1.248, 1.231};
  if (n < 1) return 1.0;
  if (n <= static_cast<int>(measured.size())) return measured[static_cast<std::size_t>(n - 1)];
  return std::sqrt(std::acos(-1.0) / 2.0);
}

std::optional<Reference> make_reference(const std::vector<double>& reference_logs,
                                        const std::vector<std::vector<double>>& groups) {
  const int n = static_cast<int>(reference_logs.size());
  if (n < 2) return std::nullopt;
  Reference r;
  r.tests = n;
  std::vector<double> sorted = reference_logs;
  std::ranges::sort(sorted);
  r.level_log = stats::median_sorted(sorted);
  // Pooled variance: the reference tests around their mean, each repeated host around its own.
  double ss = 0, df = 0;
  auto add = [&](const std::vector<double>& v) {
    if (v.size() < 2) return;
    const double m = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    for (double x : v) ss += (x - m) * (x - m);
    df += static_cast<double>(v.size()) - 1.0;
  };
  add(reference_logs);
  for (const auto& g : groups) add(g);
  if (df <= 0) return std::nullopt;
  r.df = df;
  r.sigma_log = std::sqrt(ss / df);
  r.level_se_log = median_se_factor(n) * r.sigma_log / std::sqrt(static_cast<double>(n));
  return r;
}

HostJudgement judge_host(const Reference& ref, const std::vector<double>& logs, bool higher_is_better) {
  HostJudgement j;
  j.tests = static_cast<int>(logs.size());
  if (logs.empty()) return j;
  const double r = static_cast<double>(logs.size());
  const double mean = std::accumulate(logs.begin(), logs.end(), 0.0) / r;
  double var = ref.sigma_log * ref.sigma_log;
  j.df = ref.df;
  if (logs.size() >= 2) {
    // A host whose own tests scatter more than the fleet's carries its own variance, but keeps the
    // pooled degrees of freedom: its r - 1 (1-3 for most hosts) would put Student's t beyond any
    // Holm level (docs/screen.md, "Own noise"). The larger of the two variances only widens the
    // pooled test's standard error, so under the fleet's noise the level still holds.
    double ss = 0;
    for (double x : logs) ss += (x - mean) * (x - mean);
    const double own = ss / (r - 1.0);
    if (own > var) {
      var = own;
      j.own_noise = true;
    }
  }
  j.ratio = std::exp(mean - ref.level_log);
  j.worse_log = higher_is_better ? ref.level_log - mean : mean - ref.level_log;
  j.se_log = std::sqrt(var / r + ref.level_se_log * ref.level_se_log);
  if (j.se_log <= 0) {
    j.p_value = j.worse_log > 0 ? 0.0 : 1.0;
  } else {
    j.p_value = compare::student_t_sf(j.worse_log / j.se_log, j.df);
  }
  return j;
}

double t_critical(double alpha, double df) {
  // The search asks for the same few (alpha, df) pairs for every host of every round; a quantile
  // costs a root search over the incomplete beta, so each pair is computed once.
  static thread_local std::map<std::pair<double, double>, double> cache;
  const auto key = std::pair{alpha, df};
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  const double t = compare::student_t_quantile(1.0 - alpha, df);
  if (cache.size() < 4096) cache.emplace(key, t);
  return t;
}

std::vector<bool> holm_reject(const std::vector<double>& p_values, double alpha) {
  const auto adjusted = compare::holm_adjust(p_values);
  std::vector<bool> reject(p_values.size());
  for (std::size_t i = 0; i < p_values.size(); ++i) reject[i] = adjusted[i] <= alpha;
  return reject;
}

}  // namespace ccbench::screen
