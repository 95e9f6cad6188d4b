#include "compare/sequential.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "compare/statistics.hpp"

namespace ccbench::compare {

namespace {

// The first look's one-sided level of a Wang-Tsiatis boundary z_n = C (n / first)^(kShape - 1/2)
// over looks first..20 launches a side, for an overall one-sided tail (first column) and first looks
// 2, 3, 4, 5. Derived by benchmarks/calibration/sequential_levels.py: the sub-density of the running
// sum S_n (S_n / sqrt(n) is the look's standardised estimate) propagated look by look on a grid of
// step 0.005 with the N(0, 1) increment of one launch a side, the crossed mass summed, C solved by
// Brent's method; level = 1 - Phi(C). tests/unit/compare/test_sequential_scipy.py checks them against
// SciPy's multivariate normal CDF (correlation sqrt(n_i / n_j) between looks).
struct Row {
  double overall_tail;
  std::array<double, 4> first_look_level;  // first look 2, 3, 4, 5
};
constexpr std::array<Row, 11> kLevels{{
    {1e-06, {9.4757e-07, 8.8992e-07, 8.3907e-07, 7.9711e-07}},
    {1e-05, {9.17e-06, 8.5008e-06, 7.9677e-06, 7.5503e-06}},
    {0.0001, {8.7009e-05, 7.9709e-05, 7.4417e-05, 7.0471e-05}},
    {0.0003, {0.00025198, 0.00022984, 0.00021445, 0.00020323}},
    {0.001, {0.00079975, 0.00072739, 0.00067921, 0.00064499}},
    {0.003, {0.0022668, 0.0020617, 0.0019304, 0.0018398}},
    {0.01, {0.0069818, 0.0063793, 0.0060117, 0.0057707}},
    {0.025, {0.016203, 0.014935, 0.014201, 0.013752}},
    {0.05, {0.030373, 0.028312, 0.027198, 0.026585}},
    {0.1, {0.056634, 0.053701, 0.052322, 0.051767}},
    {0.2, {0.10588, 0.10289, 0.10215, 0.10261}},
}};

std::size_t column(int first_look) {
  return static_cast<std::size_t>(std::clamp(first_look, kMinFirstLook, kMaxFirstLook) - kMinFirstLook);
}

// Linear interpolation of log(to) against log(from) over the table; past either end the end
// segment's slope continues (the curve is smooth and close to a line in log-log there).
template <class From, class To>
double log_log(double x, From from, To to) {
  if (!(x > 0.0)) return 0.0;
  const double lx = std::log(x);
  std::size_t i = 1;
  while (i + 1 < kLevels.size() && std::log(from(kLevels[i])) < lx) ++i;
  const double x0 = std::log(from(kLevels[i - 1])), x1 = std::log(from(kLevels[i]));
  const double y0 = std::log(to(kLevels[i - 1])), y1 = std::log(to(kLevels[i]));
  return std::exp(y0 + (y1 - y0) * (lx - x0) / (x1 - x0));
}

// The boundary's growth from the first look to look n: (n / first)^(kShape - 1/2), n held in
// [first, kLastLook] (before the first look nothing is decided; past the last the boundary is held).
double growth(int first, int look) {
  const int n = std::clamp(look, first, kLastLook);
  return std::pow(static_cast<double>(n) / first, kShape - 0.5);
}

}  // namespace

std::string_view name(Looks looks) { return looks == Looks::once ? "once" : "sequential"; }

std::optional<Looks> parse_looks(std::string_view text) {
  if (text == "once") return Looks::once;
  if (text == "sequential") return Looks::sequential;
  return std::nullopt;
}

double per_look_level(double overall_tail, int first_look, int look) {
  const int first = std::clamp(first_look, kMinFirstLook, kMaxFirstLook);
  const std::size_t c = column(first);
  if (!(overall_tail > 0.0)) return 0.0;
  const double at_first = log_log(
      overall_tail, [](const Row& r) { return r.overall_tail; }, [c](const Row& r) { return r.first_look_level[c]; });
  const double level = normal_sf(normal_quantile(1.0 - std::min(at_first, overall_tail)) * growth(first, look));
  // Never above the overall tail: a design of many looks asks more of each than one look does.
  return std::min(level, overall_tail);
}

double sequential_p(double per_look_p, int first_look, int look) {
  const int first = std::clamp(first_look, kMinFirstLook, kMaxFirstLook);
  const std::size_t c = column(first);
  if (!(per_look_p > 0.0)) return 0.0;
  if (!(per_look_p < 0.5)) return 1.0;  // no evidence against the null at any look
  // The first look's level of the boundary through this p-value at this look, then its overall tail.
  const double at_first = normal_sf(normal_quantile(1.0 - per_look_p) / growth(first, look));
  const double tail = log_log(
      at_first, [c](const Row& r) { return r.first_look_level[c]; }, [](const Row& r) { return r.overall_tail; });
  return std::clamp(tail, per_look_p, 1.0);
}

double LookRule::per_look(double tail) const { return per_look_at(tail, look); }

double LookRule::per_look_at(double tail, int launches) const {
  return looks == Looks::once ? tail : per_look_level(tail, first_look, launches);
}

double LookRule::p_value(double per_look_p) const {
  return looks == Looks::once ? per_look_p : sequential_p(per_look_p, first_look, look);
}

LookRule look_rule(Looks looks, int first_look, int look) {
  LookRule r;
  r.looks = looks;
  r.first_look = std::clamp(first_look, kMinFirstLook, kMaxFirstLook);
  r.look = look;
  return r;
}

}  // namespace ccbench::compare
