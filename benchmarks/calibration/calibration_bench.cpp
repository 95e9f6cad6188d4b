// Long calibration run of compare's verdicts (issue 14): prints the markdown tables of
// docs/compare.md "Calibration" (A/A false alarms by trials, launch sigma and threshold; drift;
// power; what --threshold means; interval coverage and the geomean p-value; the max's bias and
// coverage; claim verdict rates under geomean and max). The model is tests/unit/calibration's
// harness: per-sample log-normal 2%, a per-launch effect (half common to the launch's sizes), 1%
// outliers x1.5-3, optionally drift. Run:
//   build/benchmarks/calibration/calibration_bench [PAIRS]   (default 200 pairs a cell)
//   CCB_RESAMPLES=2000 ...   the max's resampled level instead of Bonferroni (compare --resamples)
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness.hpp"

using namespace ccbench;
using namespace ccbench::calibration;
using compare::CompareOptions;
using compare::Gate;
using compare::Statistic;

namespace {

int g_pairs = 200;
std::uint64_t g_seed = 1;
long g_calls = 0;
// Over every cell without a drift in the data: comparisons, drift flags, verdicts a flag changed.
long g_nodrift_runs = 0, g_nodrift_flagged = 0, g_nodrift_changed = 0;

// The max's simultaneous level: compare's default (0, Bonferroni) unless CCB_RESAMPLES names a count
// (the tables of docs/compare.md measured before Bonferroni became the default used 2000).
int resamples() {
  const char* v = std::getenv("CCB_RESAMPLES");
  return v ? std::max(0, std::atoi(v)) : 0;
}

Counts cell(const NoiseModel& b, const NoiseModel& c, const CompareOptions& options, double truth) {
  g_calls += g_pairs;
  CompareOptions o = options;
  o.resamples = resamples();
  const auto r = run_pairs(b, c, o, g_pairs, ++g_seed, truth);
  if (b.drift_per_launch == 0 && c.drift_per_launch == 0) {
    g_nodrift_runs += r.runs;
    g_nodrift_flagged += r.drift_flagged;
    g_nodrift_changed += r.drift_changed;
  }
  return r;
}

CompareOptions gate(double threshold) {
  CompareOptions o = one_look();
  o.gate = Gate{threshold, 0.05};
  return o;
}

std::string pct(double rate) { return fmt::format("{:.1f}%", rate * 100.0); }

NoiseModel model(int trials, double sigma) {
  NoiseModel m;
  m.trials = trials;
  m.launch_sigma = sigma;
  return m;
}

void aa_table() {
  fmt::print("\n### Regression gate, A/A (same distribution both sides): regression rate (inconclusive rate)\n\n");
  fmt::print("alpha 0.05, 18 sizes, {} pairs a cell. Must be <= 5%.\n\n", g_pairs);
  fmt::print(
      "| trials a side | per-launch sigma | threshold 0 | threshold 1% | threshold 5% |\n|---|---|---|---|---|\n");
  for (int trials : {1, 2, 3, 5, 10}) {
    for (double sigma : {0.005, 0.01, 0.02}) {
      std::string row = fmt::format("| {} | {}% |", trials, sigma * 100.0);
      for (double thr : {0.0, 0.01, 0.05}) {
        const auto m = model(trials, sigma);
        const auto c = cell(m, m, gate(thr), 0.0);
        row += fmt::format(" {} ({}) |", pct(c.rate(c.regression)), pct(c.rate(c.inconclusive)));
      }
      fmt::print("{}\n", row);
    }
  }
  for (auto [nb, nc] : {std::pair{10, 1}, std::pair{10, 2}, std::pair{10, 3}}) {
    std::string row = fmt::format("| {} vs {} | 1% |", nb, nc);
    for (double thr : {0.0, 0.01, 0.05}) {
      const auto b = model(nb, 0.01), k = model(nc, 0.01);
      const auto c = cell(b, k, gate(thr), 0.0);
      row += fmt::format(" {} ({}) |", pct(c.rate(c.regression)), pct(c.rate(c.inconclusive)));
    }
    fmt::print("{}\n", row);
  }
}

void drift_table() {
  fmt::print("\n### Drift 0.5% per launch, A/A otherwise\n\n");
  fmt::print(
      "regression rate (inconclusive rate); per-launch sigma 1%. \"after\": all candidate launches follow "
      "the baseline's (the candidate really measured slower, by 0.5% x trials); \"alternating\": A B A B, "
      "both sides see the same drift.\n\n");
  fmt::print("| launches | trials a side | threshold 0 | threshold 1% | threshold 5% |\n|---|---|---|---|---|\n");
  for (auto [trials, after] : {std::pair{5, true}, std::pair{10, true}, std::pair{5, false}, std::pair{10, false}}) {
    std::string row = fmt::format("| {} | {} |", after ? "after" : "alternating", trials);
    for (double thr : {0.0, 0.01, 0.05}) {
      auto b = model(trials, 0.01);
      b.drift_per_launch = 0.005;
      auto k = b;
      k.launch_offset = after ? trials : 0;
      const auto c = cell(b, k, gate(thr), 0.0);
      row += fmt::format(" {} ({}) |", pct(c.rate(c.regression)), pct(c.rate(c.inconclusive)));
    }
    fmt::print("{}\n", row);
  }
}

void power_table() {
  fmt::print("\n### Power: regression rate for true slowdowns (per-launch sigma 1%)\n\n");
  fmt::print("| true slowdown | trials | threshold 0 | threshold 1% | threshold 5% |\n|---|---|---|---|---|\n");
  struct Case {
    const char* name;
    std::function<double(const std::string&, std::size_t)> ratio;
  };
  const std::vector<Case> cases = {
      {"10% at 2 of 18 sizes",
       [](const std::string& op, std::size_t i) { return op == "allreduce" && (i == 3 || i == 4) ? 1 / 1.10 : 1.0; }},
      {"5% at every size", [](const std::string&, std::size_t) { return 1 / 1.05; }},
  };
  for (const auto& k : cases) {
    for (int trials : {3, 5, 10}) {
      std::string row = fmt::format("| {} | {} |", k.name, trials);
      for (double thr : {0.0, 0.01, 0.05}) {
        const auto b = model(trials, 0.01);
        auto c = b;
        c.ratio = k.ratio;
        const auto r = cell(b, c, gate(thr), 0.0);
        row += fmt::format(" {} |", pct(r.rate(r.regression)));
      }
      fmt::print("{}\n", row);
    }
  }
}

void threshold_table() {
  fmt::print("\n### What --threshold 5% means: regression rate for a true slowdown at every size\n\n");
  fmt::print(
      "A size fails only when the data show, one-sided at Holm-adjusted alpha 0.05, that it is more than 5% "
      "slower. Per-launch sigma 1%.\n\n");
  fmt::print("| true slowdown | 3 trials | 5 trials | 10 trials |\n|---|---|---|---|\n");
  for (double s : {0.03, 0.04, 0.05, 0.06, 0.08, 0.10}) {
    std::string row = fmt::format("| {:.0f}% |", s * 100.0);
    for (int trials : {3, 5, 10}) {
      const auto b = model(trials, 0.01);
      auto c = b;
      c.ratio = [s](const std::string&, std::size_t) { return 1.0 / (1.0 + s); };
      const auto r = cell(b, c, gate(0.05), 0.0);
      row += fmt::format(" {} |", pct(r.rate(r.regression)));
    }
    fmt::print("{}\n", row);
  }
}

void coverage_table() {
  fmt::print("\n### Interval coverage (A/A, 18 sizes) and the geomean p-value\n\n");
  fmt::print(
      "| trials | per-launch sigma | geomean 95% CI covers | geomean 90% CI covers | geomean p < 0.05 |\n"
      "|---|---|---|---|---|\n");
  for (int trials : {3, 5, 10}) {
    for (double sigma : {0.005, 0.01, 0.02}) {
      const auto m = model(trials, sigma);
      const auto c = cell(m, m, one_look(), 0.0);
      fmt::print("| {} | {}% | {} | {} | {} |\n", trials, sigma * 100.0, pct(c.rate(c.covered95)),
                 pct(c.rate(c.covered90)), pct(c.rate(c.p_below_05)));
    }
  }
  fmt::print(
      "\n### The max statistic: bias of the estimate and coverage of its interval (true ratio 1.18 at every "
      "size)\n\n");
  fmt::print(
      "| rows | trials | per-launch sigma | mean bias of max estimate | 95% CI covers | 90% CI covers |\n"
      "|---|---|---|---|---|---|\n");
  for (int rows : {6, 30}) {
    for (int trials : {3, 5, 10}) {
      for (double sigma : {0.01, 0.02}) {
        auto b = model(trials, sigma);
        if (rows == 6) {
          b.ops = {"allreduce", "allgather", "alltoall"};
          b.sizes = {256u << 20, 1u << 30};
        } else {
          b.sizes = claim_sizes();
        }
        auto c = b;
        c.ratio = [](const std::string&, std::size_t) { return 1.18; };
        CompareOptions o = one_look();
        o.statistic = Statistic::max;
        const auto r = cell(b, c, o, std::log(1.18));
        fmt::print("| {} | {} | {}% | {:+.2f}% | {} | {} |\n", rows, trials, sigma * 100.0,
                   (std::exp(r.sum_log_error / r.runs) - 1.0) * 100.0, pct(r.rate(r.covered95)),
                   pct(r.rate(r.covered90)));
      }
    }
  }
  // A launch that moves every size together, and sizes with no common launch effect at all.
  for (double common : {1.0, 0.0}) {
    for (int trials : {5, 10}) {
      auto b = model(trials, 0.01);
      b.sizes = claim_sizes();
      b.launch_common = common;
      auto c = b;
      c.ratio = [](const std::string&, std::size_t) { return 1.18; };
      CompareOptions o = one_look();
      o.statistic = Statistic::max;
      const auto r = cell(b, c, o, std::log(1.18));
      fmt::print("| 30, launch effect {} | {} | 1% | {:+.2f}% | {} | {} |\n",
                 common == 1.0 ? "all common" : "none common", trials,
                 (std::exp(r.sum_log_error / r.runs) - 1.0) * 100.0, pct(r.rate(r.covered95)),
                 pct(r.rate(r.covered90)));
    }
  }
}

std::string cri(const Counts& r) {
  return fmt::format("{} / {} / {}", pct(r.rate(r.confirmed)), pct(r.rate(r.refuted)), pct(r.rate(r.inconclusive)));
}

Counts claim_cell(double ratio, Statistic st, int trials, double sigma, double common) {
  auto b = model(trials, sigma);
  b.sizes = claim_sizes();
  b.launch_common = common;
  auto c = b;
  c.ratio = [ratio](const std::string&, std::size_t) { return ratio; };
  CompareOptions o = one_look();
  o.claim = claim_18(st);
  return cell(b, c, o, std::log(ratio));
}

void claim_table() {
  const std::vector<double> ratios = {1.00, 1.10, 1.12, 1.13, 1.15, 1.18, 1.21, 1.23, 1.25, 1.30};
  struct Column {
    const char* name;
    Statistic st;
    int trials;
    double common;
  };
  const std::vector<Column> columns = {
      {"geomean, 5 trials", Statistic::geomean, 5, 0.5}, {"geomean, 10 trials", Statistic::geomean, 10, 0.5},
      {"max, 5 trials", Statistic::max, 5, 0.5},         {"max, 10 trials", Statistic::max, 10, 0.5},
      {"max, 5 trials, common", Statistic::max, 5, 1.0}, {"max, 10 trials, common", Statistic::max, 10, 1.0}};
  std::vector<std::vector<Counts>> counts(ratios.size());
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    for (const auto& col : columns) counts[i].push_back(claim_cell(ratios[i], col.st, col.trials, 0.01, col.common));
  }
  fmt::print(
      "\n### Claim \"18% +- 5%\" (band [1.13, 1.23]), true ratio the same at every size, 30 rows "
      "(16M-1G x 3 ops), per-launch sigma 1%\n\n");
  fmt::print(
      "confirmed / refuted / inconclusive. \"common\": the whole launch effect is common to every size of the "
      "launch (a launch moves every size together); otherwise half of it.\n\n| true ratio |");
  for (const auto& col : columns) fmt::print(" {} |", col.name);
  fmt::print("\n|---|");
  for (std::size_t k = 0; k < columns.size(); ++k) fmt::print("---|");
  fmt::print("\n");
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    std::string row = fmt::format("| {:.2f} |", ratios[i]);
    for (const auto& r : counts[i]) row += fmt::format(" {} |", cri(r));
    fmt::print("{}\n", row);
  }
  fmt::print("\n### Decisive verdicts (confirmed or refuted) per true ratio, same cells\n\n| true ratio |");
  for (const auto& col : columns) fmt::print(" {} |", col.name);
  fmt::print("\n|---|");
  for (std::size_t k = 0; k < columns.size(); ++k) fmt::print("---|");
  fmt::print("\n");
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    std::string row = fmt::format("| {:.2f} |", ratios[i]);
    for (const auto& r : counts[i]) row += fmt::format(" {} |", pct(r.rate(r.confirmed + r.refuted)));
    fmt::print("{}\n", row);
  }
  fmt::print(
      "\nPer-launch sigma 2%, max statistic:\n\n| true ratio | max, 5 trials | max, 10 trials |\n|---|---|---|\n");
  for (double ratio : {1.10, 1.12, 1.18, 1.21}) {
    std::string row = fmt::format("| {:.2f} |", ratio);
    for (int trials : {5, 10}) row += fmt::format(" {} |", cri(claim_cell(ratio, Statistic::max, trials, 0.02, 0.5)));
    fmt::print("{}\n", row);
  }
}

// Not a flat truth: the max's interval must hold where one size stands out (a true 1.25 at one of 30
// rows, the rest 1.18: outside the band, must not be confirmed) and where one size reaches the band
// and the others are below it (1.15 at one row, 1.05 elsewhere: inside the band).
void shape_table() {
  fmt::print("\n### Claim \"18% +- 5%\", max statistic, one size different from the rest (30 rows, sigma 1%)\n\n");
  fmt::print("| true ratios | 5 trials | 10 trials | 5 trials, common | 10 trials, common |\n|---|---|---|---|---|\n");
  struct Shape {
    const char* name;
    double one, rest;
  };
  for (const auto& sh : {Shape{"1.25 at allreduce 1G, 1.18 elsewhere", 1.25, 1.18},
                         Shape{"1.15 at allreduce 1G, 1.05 elsewhere", 1.15, 1.05},
                         Shape{"1.12 at allreduce 1G, 1.05 elsewhere", 1.12, 1.05}}) {
    std::string row = fmt::format("| {} |", sh.name);
    for (double common : {0.5, 1.0}) {
      for (int trials : {5, 10}) {
        auto b = model(trials, 0.01);
        b.sizes = claim_sizes();
        b.launch_common = common;
        auto c = b;
        const double one = sh.one, rest = sh.rest;
        const std::size_t last = b.sizes.size() - 1;
        c.ratio = [one, rest, last](const std::string& op, std::size_t i) {
          return op == "allreduce" && i == last ? one : rest;
        };
        CompareOptions o = one_look();
        o.claim = claim_18(Statistic::max);
        row += fmt::format(" {} |", cri(cell(b, c, o, std::log(std::max(one, rest)))));
      }
    }
    fmt::print("{}\n", row);
  }
}

// `compare --statistic p99`: rows of 400 per-iteration samples carrying percentiles_us, each trial
// reduced to its p99. A/A regression rate, and the regression rate of a true slowdown of every sample
// (the p99 moves with it), beside the median's on the same data. Outliers (x1.5-3) are the tail.
void p99_table() {
  fmt::print("\n#### `--statistic p99`: regression rate (inconclusive rate), 18 sizes, 400 samples a row\n\n");
  fmt::print("alpha 0.05, per-launch sigma 1%, {} pairs a cell; A/A must be <= 5%.\n\n", g_pairs);
  fmt::print(
      "| outliers | trials a side | true slowdown | p99: threshold 0 | p99: threshold 1% | p99: threshold 5% | "
      "median: threshold 0 |\n|---|---|---|---|---|---|---|\n");
  for (double outliers : {0.01, 0.03}) {
    for (int trials : {3, 5, 10}) {
      for (double slowdown : {0.0, 0.03, 0.10}) {
        NoiseModel b = model(trials, 0.01);
        b.samples = 400;
        b.outlier_rate = outliers;
        b.percentiles = {99};
        NoiseModel k = b;
        k.ratio = [slowdown](const std::string&, std::size_t) { return 1.0 / (1.0 + slowdown); };
        std::string row = fmt::format("| {}% | {} | {}% |", outliers * 100.0, trials, slowdown * 100.0);
        for (double thr : {0.0, 0.01, 0.05}) {
          CompareOptions o = gate(thr);
          o.row_percentile = 99;
          const auto c = cell(b, k, o, 0.0);
          row += fmt::format(" {} ({}) |", pct(c.rate(c.regression)), pct(c.rate(c.inconclusive)));
        }
        const auto c = cell(b, k, gate(0.0), 0.0);
        row += fmt::format(" {} ({}) |", pct(c.rate(c.regression)), pct(c.rate(c.inconclusive)));
        fmt::print("{}\n", row);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_pairs = std::max(10, std::atoi(argv[1]));
  const std::string only = argc > 2 ? argv[2] : "";
  const auto t0 = std::chrono::steady_clock::now();
  auto want = [&](const char* name) { return only.empty() || only == name; };
  if (only == "cell" && argc > 5) {
    // One claim cell: calibration_bench PAIRS cell RATIO geomean|max TRIALS [COMMON]
    const double ratio = std::atof(argv[3]);
    const auto st = std::string(argv[4]) == "max" ? Statistic::max : Statistic::geomean;
    const auto r = claim_cell(ratio, st, std::atoi(argv[5]), 0.01, argc > 6 ? std::atof(argv[6]) : 0.5);
    fmt::print("confirmed {} refuted {} inconclusive {} of {}; 90% CI covers {}; drift flagged {} changed {}\n",
               r.confirmed, r.refuted, r.inconclusive, r.runs, r.covered90, r.drift_flagged, r.drift_changed);
    return 0;
  }
  if (want("aa")) aa_table();
  if (want("drift")) drift_table();
  if (want("power")) power_table();
  if (want("threshold")) threshold_table();
  if (want("coverage")) coverage_table();
  if (want("claim")) claim_table();
  if (want("shape")) shape_table();
  if (only == "p99") p99_table();  // not in the full run: asked by name
  if (g_nodrift_runs > 0) {
    fmt::print(
        "\nNo drift in the data ({} comparisons): a drift flagged in {} ({}), a verdict changed by it in {} ({})\n",
        g_nodrift_runs, g_nodrift_flagged, pct(static_cast<double>(g_nodrift_flagged) / g_nodrift_runs),
        g_nodrift_changed, pct(static_cast<double>(g_nodrift_changed) / g_nodrift_runs));
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("\n{} comparisons in {:.1f} s ({:.2f} ms each)\n", g_calls, s, 1e3 * s / static_cast<double>(g_calls));
  return 0;
}
