#include "harness.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "compare/statistics.hpp"
#include "core/bandwidth.hpp"
#include "core/percentiles.hpp"
#include "core/types.hpp"

namespace ccbench::calibration {

namespace {

ResultFile header() {
  ResultFile f;
  f.run.status = "complete";
  f.system = {{"instance_type", "p5en.48xlarge"}, {"ranks", 16}, {"ranks_per_node", 8}};
  f.fabric = {{"generation", "v3"}, {"provider", "efa"}, {"link_gbps", 3200}};
  f.config = {{"timing", {{"method", "ccbench"}}}, {"iters", "auto"}};
  return f;
}

}  // namespace

std::vector<ResultFile> make_files(const NoiseModel& m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<ResultFile> files;
  if (!m.one_file_per_trial) files.push_back(header());
  const double common = std::sqrt(m.launch_common), own = std::sqrt(1.0 - m.launch_common);
  for (int t = 0; t < m.trials; ++t) {
    if (m.one_file_per_trial) files.push_back(header());
    ResultFile& f = files.back();
    const double u = normal(rng);
    const double drift = m.drift_per_launch * (t + m.launch_offset);
    for (const auto& op : m.ops) {
      for (std::size_t si = 0; si < m.sizes.size(); ++si) {
        const std::uint64_t b = m.sizes[si];
        const double factor = bus_factor(*parse_op(op), 16);
        const double base = 20.0 + static_cast<double>(b) * factor / (300.0 * 1e3);
        const double launch = m.launch_sigma * (common * u + own * normal(rng));
        const double med = base * std::exp(launch + drift) / m.ratio(op, si);
        ResultRow r;
        r.op = op;
        r.backend = "nccl";
        r.dtype = "float";
        r.redop = op == "allreduce" ? "sum" : "none";
        r.bytes = b;
        r.ranks = 16;
        r.trial = m.one_file_per_trial ? 0 : t;
        r.samples_us.reserve(static_cast<std::size_t>(m.samples));
        for (int s = 0; s < m.samples; ++s) {
          double v = med * std::exp(m.sample_sigma * normal(rng));
          if (unit(rng) < m.outlier_rate) v *= 1.5 + 1.5 * unit(rng);
          r.samples_us.push_back(v);
        }
        auto sorted = r.samples_us;
        std::sort(sorted.begin(), sorted.end());
        const std::size_t n = sorted.size();
        r.time_us.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
        r.ci_target_met = true;
        if (!m.percentiles.empty()) r.extra["percentiles_us"] = percentiles::to_json(sorted, m.percentiles);
        f.results.push_back(std::move(r));
      }
    }
  }
  return files;
}

compare::Side make_side(const std::string& name, const NoiseModel& m, std::uint64_t seed) {
  compare::Side s;
  s.name = name;
  s.inputs = {name};
  s.files = make_files(m, seed);
  return s;
}

std::vector<std::uint64_t> claim_sizes() {
  std::vector<std::uint64_t> out;
  // 16M .. 1G in 10 roughly geometric steps (a sweep with -f 1.58).
  const std::uint64_t mib = 1u << 20;
  for (std::uint64_t s : {16, 25, 40, 64, 101, 161, 256, 406, 645, 1024}) out.push_back(s * mib);
  return out;
}

double true_log_geomean(const NoiseModel& m) {
  double sum = 0;
  int n = 0;
  for (const auto& op : m.ops) {
    for (std::size_t i = 0; i < m.sizes.size(); ++i) {
      sum += std::log(m.ratio(op, i));
      ++n;
    }
  }
  return n ? sum / n : 0.0;
}

double true_log_max(const NoiseModel& m) {
  double best = -std::numeric_limits<double>::infinity();
  for (const auto& op : m.ops) {
    for (std::size_t i = 0; i < m.sizes.size(); ++i) best = std::max(best, std::log(m.ratio(op, i)));
  }
  return best;
}

Counts run_pairs(const NoiseModel& base, const NoiseModel& cand, const compare::CompareOptions& options, int pairs,
                 std::uint64_t seed, double true_log) {
  Counts c;
  const bool use_max = options.claim ? options.claim->statistic == compare::Statistic::max
                                     : options.statistic == compare::Statistic::max;
  const compare::CompareOptions& o = options;
  for (int i = 0; i < pairs; ++i) {
    const std::uint64_t s = seed * 1000003ULL + 2ULL * static_cast<std::uint64_t>(i);
    const auto b = make_side("baseline", base, s);
    const auto k = make_side("candidate", cand, s + 1);
    const auto r = compare::compare_sides(b, k, o);
    ++c.runs;
    c.regression += r.verdict == compare::Verdict::regression;
    c.pass += r.verdict == compare::Verdict::pass;
    c.inconclusive += r.verdict == compare::Verdict::inconclusive;
    c.confirmed += r.verdict == compare::Verdict::confirmed;
    c.refuted += r.verdict == compare::Verdict::refuted;
    const auto& st = use_max ? r.summary.max : r.summary.geomean;
    const double f = r.summary.normalization;
    c.sum_log_error += std::log(st.ratio * f) - true_log;
    if (st.ci95 && st.ci90) {
      ++c.with_ci;
      const double t = std::exp(true_log);
      c.covered95 += st.ci95->first * f <= t && t <= st.ci95->second * f;
      c.covered90 += st.ci90->first * f <= t && t <= st.ci90->second * f;
    }
    if (r.summary.geomean.p_value && *r.summary.geomean.p_value < 0.05) ++c.p_below_05;
    c.drift_flagged += compare::drift_detected(r.summary);
    c.drift_changed += r.drift_changed_verdict;
  }
  return c;
}

namespace {

// P(Binomial(n, p) <= k) = I_{1-p}(n - k, k + 1).
double binomial_cdf(int k, int n, double p) {
  if (k < 0) return 0.0;
  if (k >= n) return 1.0;
  return compare::incomplete_beta(1.0 - p, n - k, k + 1.0);
}

}  // namespace

double binomial_upper(int k, int n, double confidence) {
  // Largest p with P(X <= k) >= 1 - confidence.
  double lo = static_cast<double>(k) / n, hi = 1.0;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (binomial_cdf(k, n, mid) >= 1.0 - confidence ? lo : hi) = mid;
  }
  return lo;
}

double binomial_lower(int k, int n, double confidence) {
  // Smallest p with P(X >= k) >= 1 - confidence.
  double lo = 0.0, hi = static_cast<double>(k) / n;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (1.0 - binomial_cdf(k - 1, n, mid) >= 1.0 - confidence ? hi : lo) = mid;
  }
  return hi;
}

compare::CompareOptions one_look() {
  compare::CompareOptions o;
  o.looks = compare::Looks::once;
  return o;
}

Asked ask_until_decided(NoiseModel base, NoiseModel cand, const compare::CompareOptions& options, std::uint64_t seed,
                        int first, int last) {
  const compare::CompareOptions& o = options;
  Asked a;
  for (int n = first; n <= last; ++n) {
    base.trials = cand.trials = n;
    const auto r = compare::compare_sides(make_side("baseline", base, seed), make_side("candidate", cand, seed + 1), o);
    a.verdict = r.verdict;
    a.launches = n;
    if (r.verdict == compare::Verdict::confirmed || r.verdict == compare::Verdict::refuted) break;
  }
  return a;
}

AskedCounts run_asked(const NoiseModel& base, const NoiseModel& cand, const compare::CompareOptions& options, int pairs,
                      std::uint64_t seed, double true_ratio, int first, int last) {
  AskedCounts c;
  const double lo = options.claim ? options.claim->lower() : 0.0, hi = options.claim ? options.claim->upper() : 0.0;
  constexpr double kEdge = 1e-9;
  const bool inside = true_ratio >= lo - kEdge && true_ratio <= hi + kEdge;
  const bool outside = true_ratio <= lo + kEdge || true_ratio >= hi - kEdge;
  std::vector<int> all;
  for (int i = 0; i < pairs; ++i) {
    const std::uint64_t s = seed * 1000003ULL + 2ULL * static_cast<std::uint64_t>(i);
    const Asked a = ask_until_decided(base, cand, options, s, first, last);
    ++c.runs;
    c.confirmed += a.verdict == compare::Verdict::confirmed;
    c.refuted += a.verdict == compare::Verdict::refuted;
    c.inconclusive += a.verdict == compare::Verdict::inconclusive;
    c.wrong_refuted += inside && a.verdict == compare::Verdict::refuted;
    c.wrong_confirmed += outside && a.verdict == compare::Verdict::confirmed;
    const bool decided = a.verdict == compare::Verdict::confirmed || a.verdict == compare::Verdict::refuted;
    if (decided) c.launches.push_back(a.launches);
    all.push_back(decided ? a.launches : last);
  }
  std::sort(c.launches.begin(), c.launches.end());
  std::sort(all.begin(), all.end());
  if (!all.empty()) {
    const std::size_t m = all.size();
    c.median_launches = m % 2 ? all[m / 2] : 0.5 * (all[m / 2 - 1] + all[m / 2]);
  }
  return c;
}

compare::Claim claim_18(compare::Statistic statistic) {
  compare::Claim c;
  c.statement = "up to 18% faster";
  c.expected_speedup = 0.18;
  c.tolerance = 0.05;
  c.statistic = statistic;
  return c;
}

}  // namespace ccbench::calibration
