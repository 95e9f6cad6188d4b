#include "core/percentiles.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/comma_list.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/stats.hpp"

namespace ccbench::percentiles {
namespace {

// log P(B = k) for B ~ Binomial(n, q), 0 < q < 1.
double log_binomial_pmf(std::size_t n, std::size_t k, double q) {
  const auto nd = static_cast<double>(n), kd = static_cast<double>(k);
  return std::lgamma(nd + 1.0) - std::lgamma(kd + 1.0) - std::lgamma(nd - kd + 1.0) + kd * std::log(q) +
         (nd - kd) * std::log1p(-q);
}

}  // namespace

std::string key(double percent) {
  // The shortest text that reads back as the level, but never in exponent form (1e-05 -> 0.00001),
  // so every key is "p" and a decimal number.
  std::string text = fmt::format("{}", percent);
  if (text.find('e') != std::string::npos) {
    text = fmt::format("{:.17f}", percent);
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return "p" + text;
}

std::vector<double> parse_list(std::string_view text, std::string_view flag) {
  std::vector<double> levels;
  for (std::string_view item : split_commas(text)) {
    const double p = parse_finite(item, flag);
    if (!(p > 0.0 && p < 100.0)) {
      throw UsageError(fmt::format("{}: each percentile must lie strictly between 0 and 100, got '{}'", flag, item));
    }
    levels.push_back(p);
  }
  std::ranges::sort(levels);
  const auto [first, last] = std::ranges::unique(levels);
  levels.erase(first, last);
  return levels;
}

std::size_t min_samples_for_estimate(double percent) {
  const double tail = std::min(percent, 100.0 - percent) / 100.0;
  // 1e-9 absorbs the rounding of 100 - 99.99, which is a little more than 0.01.
  return static_cast<std::size_t>(std::ceil(1.0 / tail - 1e-9));
}

std::size_t min_samples_for_ci(double percent, double confidence) {
  const double alpha_half = (1.0 - confidence) / 2.0;
  const double wider = std::max(percent, 100.0 - percent) / 100.0;
  // Both ends exist once the extreme order statistics miss the quantile rarely enough:
  // P(B = 0) = (1 - p)^n and P(B = n) = p^n, the larger of which is wider^n.
  auto n = static_cast<std::size_t>(std::ceil(std::log(alpha_half) / std::log(wider)));
  while (std::pow(wider, static_cast<double>(n)) > alpha_half) ++n;
  while (n > 1 && std::pow(wider, static_cast<double>(n - 1)) <= alpha_half) --n;
  return n;
}

std::optional<std::pair<std::size_t, std::size_t>> ci_indices(std::size_t n, double percent, double confidence) {
  if (n == 0) return std::nullopt;
  const double q = percent / 100.0;
  const double alpha_half = (1.0 - confidence) / 2.0;
  // Lower end: sum P(B = k) upwards while the cumulative stays within alpha/2.
  double below = 0.0;
  std::optional<std::size_t> lo;
  for (std::size_t k = 0; k < n; ++k) {
    below += std::exp(log_binomial_pmf(n, k, q));
    if (below > alpha_half) break;
    lo = k;
  }
  // Upper end: P(B > j) summed downwards from P(B = n), separately so no 1 - F cancels.
  double above = std::exp(log_binomial_pmf(n, n, q));  // P(B > n - 1)
  if (!lo || above > alpha_half) return std::nullopt;
  std::size_t hi = n - 1;
  while (hi > 0) {
    const double next = above + std::exp(log_binomial_pmf(n, hi, q));  // P(B > hi - 1)
    if (next > alpha_half) break;
    above = next;
    --hi;
  }
  return std::pair{*lo, hi};
}

nlohmann::json to_json(std::span<const double> sorted, std::span<const double> levels_percent) {
  nlohmann::json out = nlohmann::json::object();
  for (const double p : levels_percent) {
    nlohmann::json level = {{"value", stats::quantile_sorted(sorted, p / 100.0)}};
    if (const auto ci = ci_indices(sorted.size(), p)) {
      level["ci95"] = nlohmann::json::array({sorted[ci->first], sorted[ci->second]});
    } else {
      level["ci95"] = nullptr;
      level["ci_absent"] = fmt::format("a 95% CI of {} needs at least {} samples; the row has {}", key(p),
                                       min_samples_for_ci(p), sorted.size());
    }
    out[key(p)] = std::move(level);
  }
  return out;
}

double of_samples(std::span<const double> samples, double percent) {
  std::vector<double> sorted(samples.begin(), samples.end());
  std::ranges::sort(sorted);
  return stats::quantile_sorted(sorted, percent / 100.0);
}

std::optional<double> parse_statistic(std::string_view text) {
  if (text.size() < 2 || text.front() != 'p') return std::nullopt;
  const std::string_view number = text.substr(1);
  if (!std::ranges::all_of(number, [](char c) { return (c >= '0' && c <= '9') || c == '.'; })) return std::nullopt;
  try {
    const double p = parse_finite(number, "--statistic");
    if (p > 0.0 && p < 100.0) return p;
  } catch (const UsageError&) {
  }
  return std::nullopt;
}

}  // namespace ccbench::percentiles
