// Launches to a decisive verdict: for simulated fleets with a known true ratio (the calibration
// harness's noise model: 1% launch noise, half or all of it common to a launch's sizes, 30 rows, 20
// samples a size and launch), ccbench compare is run on 5 (its --min-trials), 6, ... launches a side
// (added one at a time, as a team would) until its claim verdict is confirmed or refuted, at most MAX launches.
// The reference is what a fixed-iteration sweep in the style of nccl-tests gives for the same node
// time: one launch a side with (launches compare used) x 20 iterations a size, judged by its own
// ratio against the band (inside: "confirmed", outside: "refuted"). Prints, per true ratio, how
// often each is right and wrong and the ratio of their error rates.
//   build/benchmarks/decisive/decisive_bench [FLEETS] [MAX]   (default 100 fleets, 20 launches)
// `decisive_bench looks [FLEETS] [COMMON]` prints the table of docs/compare.md "Asking again": the same
// team asking after every added launch from 5 to 20 a side under --looks once and --looks sequential,
// per true ratio (the band's edges included) the wrong verdicts and the launches to a decision.
// `decisive_bench perlook geomean|max RATIO COMMON once|sequential FLEETS [RESAMPLES]` prints one cell's
// verdict rates at every look from 5 to 20 asked alone, and the first-crossing rates (docs/compare.md
// "Asking again": how the max's resampled level was found to under-cover).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "compare/statistics.hpp"
#include "harness.hpp"

using namespace ccbench;
using namespace ccbench::calibration;
using compare::Statistic;
using compare::Verdict;

namespace {

constexpr int kSamples = 20;

struct Tally {
  int fleets = 0, decided = 0, right = 0, wrong = 0;
  std::vector<int> launches;  // per decided fleet
  int sweep_right = 0, sweep_wrong = 0;
};

// The sweep's own verdict: its per-size ratio of medians, geomean or max over sizes, against the band.
bool sweep_says_inside(const compare::Comparison& c, Statistic st, const compare::Claim& claim) {
  double v = st == Statistic::max ? -std::numeric_limits<double>::infinity() : 0.0;
  for (const auto& r : c.rows) {
    const double ratio = r.baseline.median_us / r.candidate.median_us;
    v = st == Statistic::max ? std::max(v, ratio) : v + std::log(ratio) / static_cast<double>(c.rows.size());
  }
  if (st == Statistic::geomean) v = std::exp(v);
  return v >= claim.lower() && v <= claim.upper();
}

Tally run(double ratio, Statistic st, double common, int fleets, int max_launches) {
  Tally t;
  const auto claim = claim_18(st);
  const bool inside = ratio >= claim.lower() && ratio <= claim.upper();
  compare::CompareOptions o;
  o.claim = claim;
  o.looks = compare::Looks::once;  // the table of the single-look rule (the "looks" mode has both)
  for (int f = 0; f < fleets; ++f) {
    NoiseModel b;
    b.sizes = claim_sizes();
    b.launch_common = common;
    NoiseModel c = b;
    c.ratio = [ratio](const std::string&, std::size_t) { return ratio; };
    const std::uint64_t seed = 7919ULL * static_cast<std::uint64_t>(f) + 17;
    ++t.fleets;
    int used = max_launches;
    for (int n = o.min_trials; n <= max_launches; ++n) {
      b.trials = c.trials = n;  // the first n launches of the same fleet (the generator is sequential)
      const auto r = compare::compare_sides(make_side("baseline", b, seed), make_side("candidate", c, seed + 1), o);
      if (r.verdict == Verdict::confirmed || r.verdict == Verdict::refuted) {
        used = n;
        ++t.decided;
        t.launches.push_back(n);
        ((r.verdict == Verdict::confirmed) == inside ? t.right : t.wrong) += 1;
        break;
      }
    }
    // The same node time as one launch a side.
    NoiseModel lb = b, lc = c;
    lb.trials = lc.trials = 1;
    lb.samples = lc.samples = kSamples * used;
    compare::CompareOptions report;
    const auto one =
        compare::compare_sides(make_side("baseline", lb, seed + 2), make_side("candidate", lc, seed + 3), report);
    (sweep_says_inside(one, st, claim) == inside ? t.sweep_right : t.sweep_wrong) += 1;
  }
  return t;
}

std::string pct(int k, int n) { return n ? fmt::format("{:.0f}%", 100.0 * k / n) : "-"; }
std::string pct1(int k, int n) { return n ? fmt::format("{:.1f}%", 100.0 * k / n) : "-"; }

// Wrong verdicts: refuted at a true ratio inside the band (edges included), confirmed at one outside
// it (edges included).
std::string wrong_cell(const AskedCounts& a, double ratio, const compare::Claim& claim) {
  const bool lower_edge = std::abs(ratio - claim.lower()) < 1e-9, upper_edge = std::abs(ratio - claim.upper()) < 1e-9;
  if (lower_edge || upper_edge) {
    return fmt::format("{} refuted, {} confirmed", pct1(a.wrong_refuted, a.runs), pct1(a.wrong_confirmed, a.runs));
  }
  return pct1(a.wrong_refuted + a.wrong_confirmed, a.runs);
}

// The claim model's two sides: 30 rows, a share `common` of the launch effect common to a launch's
// sizes, the candidate `ratio` times faster at every size.
std::pair<NoiseModel, NoiseModel> claim_fleet(double ratio, double common) {
  NoiseModel b;
  b.sizes = claim_sizes();
  b.launch_common = common;
  NoiseModel c = b;
  c.ratio = [ratio](const std::string&, std::size_t) { return ratio; };
  return {b, c};
}

int looks_table(int fleets, const std::vector<double>& commons) {
  const auto t0 = std::chrono::steady_clock::now();
  fmt::print(
      "claim \"18% +- 5%\" (band [1.13, 1.23]), 30 rows, 1% launch noise, {} fleets a cell; a team asks after every "
      "added launch from 5 to 20 a side and stops at the first confirmed or refuted verdict\n\n",
      fleets);
  fmt::print(
      "| statistic | launch effect | true ratio | once: confirmed / refuted / inconclusive | once: wrong | sequential: "
      "confirmed / refuted / inconclusive | sequential: wrong | sequential: median launches a side (undecided "
      "counted at 20) |\n|---|---|---|---|---|---|---|---|\n");
  for (const auto st : {Statistic::geomean, Statistic::max}) {
    for (const double common : commons) {
      for (const double ratio : {1.00, 1.10, 1.13, 1.15, 1.18, 1.21, 1.23, 1.25, 1.30}) {
        const auto [b, c] = claim_fleet(ratio, common);
        compare::CompareOptions o;
        o.claim = claim_18(st);
        std::vector<AskedCounts> by_rule;
        for (const auto looks : {compare::Looks::once, compare::Looks::sequential}) {
          o.looks = looks;
          by_rule.push_back(run_asked(b, c, o, fleets, 4409, ratio, 5, 20));
        }
        const auto cells = [&](const AskedCounts& a) {
          return fmt::format("{} / {} / {}", pct(a.confirmed, a.runs), pct(a.refuted, a.runs),
                             pct(a.inconclusive, a.runs));
        };
        fmt::print("| {} | {} | {:.2f} | {} | {} | {} | {} | {:g} |\n", compare::name(st),
                   common == 1.0 ? "all common" : "half common", ratio, cells(by_rule[0]),
                   wrong_cell(by_rule[0], ratio, o.claim.value()), cells(by_rule[1]),
                   wrong_cell(by_rule[1], ratio, o.claim.value()), by_rule[1].median_launches);
        std::fflush(stdout);
      }
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("\n{:.0f} s\n", s);
  return 0;
}

// Per-look verdict rates (every look from 5 to 20 asked, no stopping: what one look at that launch
// count gives) and the first-crossing rates (a team stopping at its first decided verdict).
int per_look_table(Statistic st, double ratio, double common, compare::Looks looks, int fleets, int resamples) {
  auto [b, c] = claim_fleet(ratio, common);
  compare::CompareOptions o;
  o.claim = claim_18(st);
  o.looks = looks;
  o.resamples = resamples;
  std::vector<int> conf(21), ref(21);
  int first_conf = 0, first_ref = 0;
  for (int i = 0; i < fleets; ++i) {
    const std::uint64_t s = 4409ULL * 1000003ULL + 2ULL * static_cast<std::uint64_t>(i);
    bool decided = false;
    for (int n = 5; n <= 20; ++n) {
      b.trials = c.trials = n;
      const auto r = compare::compare_sides(make_side("baseline", b, s), make_side("candidate", c, s + 1), o);
      const bool cf = r.verdict == Verdict::confirmed, rf = r.verdict == Verdict::refuted;
      conf[n] += cf;
      ref[n] += rf;
      if (!decided && (cf || rf)) {
        decided = true;
        (cf ? first_conf : first_ref) += 1;
      }
    }
  }
  fmt::print("{} ratio {:.3f} common {} looks {} fleets {} resamples {}\n", compare::name(st), ratio, common,
             compare::name(looks), fleets, resamples);
  for (int n = 5; n <= 20; ++n)
    fmt::print("n={:2d} confirmed {:5.1f}% refuted {:5.1f}%\n", n, 100.0 * conf[n] / fleets, 100.0 * ref[n] / fleets);
  fmt::print("first crossing: confirmed {:.1f}% refuted {:.1f}%\n", 100.0 * first_conf / fleets,
             100.0 * first_ref / fleets);
  return 0;
}

}  // namespace

// One statistic's sequential rows of the "looks" table under a spread rule, for the true ratios given.
int asked_rows(Statistic st, compare::Spread spread, double common, int fleets, const std::vector<double>& ratios) {
  for (const double ratio : ratios) {
    const auto [b, c] = claim_fleet(ratio, common);
    compare::CompareOptions o;
    o.claim = claim_18(st);
    o.spread = spread;
    const AskedCounts a = run_asked(b, c, o, fleets, 4409, ratio, 5, 20);
    fmt::print("| {} | {} | {:.2f} | {} / {} / {} | {} | {:g} |\n", compare::name(st), compare::name(spread), ratio,
               pct(a.confirmed, a.runs), pct(a.refuted, a.runs), pct(a.inconclusive, a.runs),
               wrong_cell(a, ratio, o.claim.value()), a.median_launches);
    std::fflush(stdout);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 7 && std::string(argv[1]) == "asked") {
    // asked STAT SPREAD COMMON FLEETS RATIO...
    std::vector<double> ratios;
    for (int i = 6; i < argc; ++i) ratios.push_back(std::atof(argv[i]));
    return asked_rows(std::string(argv[2]) == "max" ? Statistic::max : Statistic::geomean,
                      compare::parse_spread(argv[3]).value_or(compare::Spread::moderated), std::atof(argv[4]),
                      std::max(10, std::atoi(argv[5])), ratios);
  }
  if (argc >= 7 && std::string(argv[1]) == "perlook") {
    return per_look_table(std::string(argv[2]) == "max" ? Statistic::max : Statistic::geomean, std::atof(argv[3]),
                          std::atof(argv[4]),
                          std::string(argv[5]) == "once" ? compare::Looks::once : compare::Looks::sequential,
                          std::max(10, std::atoi(argv[6])), argc > 7 ? std::max(0, std::atoi(argv[7])) : 0);
  }
  if (argc > 1 && std::string(argv[1]) == "looks") {
    const int fleets = argc > 2 ? std::max(10, std::atoi(argv[2])) : 100;
    std::vector<double> commons = {0.5, 1.0};
    if (argc > 3) commons = {std::atof(argv[3])};
    return looks_table(fleets, commons);
  }
  const int fleets = argc > 1 ? std::max(10, std::atoi(argv[1])) : 100;
  const int max_launches = argc > 2 ? std::clamp(std::atoi(argv[2]), 3, 100) : 20;
  const auto t0 = std::chrono::steady_clock::now();
  fmt::print(
      "claim \"18% +- 5%\" (band [1.13, 1.23]), 30 rows, 1% launch noise, {} fleets a cell, at most {} "
      "launches a side\n\n",
      fleets, max_launches);
  fmt::print(
      "| statistic | launch effect | true ratio | compare: decided | launches a side (median, 90th pct) | compare "
      "right / wrong | one long launch, same node time: right / wrong | wrong-rate ratio (long launch / compare) |\n"
      "|---|---|---|---|---|---|---|---|\n");
  for (const auto st : {Statistic::max, Statistic::geomean}) {
    for (const double common : {0.5, 1.0}) {
      for (const double ratio : {1.00, 1.10, 1.15, 1.18, 1.21, 1.25, 1.30}) {
        auto t = run(ratio, st, common, fleets, max_launches);
        std::sort(t.launches.begin(), t.launches.end());
        const auto q = [&](double p) {
          return t.launches.empty()
                     ? std::string("-")
                     : fmt::format(
                           "{}", t.launches[static_cast<std::size_t>(p * static_cast<double>(t.launches.size() - 1))]);
        };
        const double cw = static_cast<double>(t.wrong) / t.fleets, sw = static_cast<double>(t.sweep_wrong) / t.fleets;
        const std::string ratio_cell = cw > 0 ? fmt::format("{:.1f}", sw / cw)
                                              : (sw > 0 ? std::string("inf (compare 0 wrong)") : std::string("-"));
        fmt::print("| {} | {} | {:.2f} | {} | {}, {} | {} / {} | {} / {} | {} |\n", compare::name(st),
                   common == 1.0 ? "all common" : "half common", ratio, pct(t.decided, t.fleets), q(0.5), q(0.9),
                   pct(t.right, t.fleets), pct(t.wrong, t.fleets), pct(t.sweep_right, t.fleets),
                   pct(t.sweep_wrong, t.fleets), ratio_cell);
      }
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("\n{:.0f} s\n", s);
  return 0;
}
