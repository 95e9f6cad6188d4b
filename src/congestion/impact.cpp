#include "congestion/impact.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "compare/statistics.hpp"
#include "core/sizes.hpp"
#include "core/stats.hpp"

namespace ccbench::congestion {
namespace {

std::vector<double> pooled(const std::vector<TrialPair>& trials, bool congested) {
  std::vector<double> all;
  for (const auto& t : trials) {
    const auto& v = congested ? t.congested_us : t.isolated_us;
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

std::string factor_text(const Factor& f) {
  if (!(f.estimate > 0)) return "-";
  if (!f.ci95) return fmt::format("{:.3f} [n<2]", f.estimate);
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", f.estimate, f.ci95->first, f.ci95->second);
}

std::string us(double v) { return v >= 1000.0 ? fmt::format("{:.0f}", v) : fmt::format("{:.1f}", v); }

}  // namespace

std::string test_name(const std::string& op, std::uint64_t bytes) {
  const std::string size = format_bytes(bytes);
  return op + " " + size + (size.back() >= '0' && size.back() <= '9' ? " B" : "");
}

Factor impact_factor(const std::vector<std::pair<double, double>>& per_trial, double confidence) {
  Factor f;
  std::vector<double> d;
  for (const auto& [isolated, congested] : per_trial) {
    if (isolated > 0 && congested > 0) d.push_back(std::log(congested) - std::log(isolated));
  }
  f.trials = static_cast<int>(d.size());
  if (d.empty()) return f;
  double mean = 0;
  for (double x : d) mean += x;
  mean /= static_cast<double>(d.size());
  f.estimate = std::exp(mean);
  if (d.size() < 2) return f;
  double ss = 0;
  for (double x : d) ss += (x - mean) * (x - mean);
  const double n = static_cast<double>(d.size());
  compare::TShift shift;
  shift.estimate = mean;
  shift.se = std::sqrt(ss / (n - 1.0) / n);
  shift.df = n - 1.0;
  const auto [lo, hi] = shift.interval(confidence);
  f.ci95 = std::make_pair(std::exp(lo), std::exp(hi));
  f.shift = shift;
  return f;
}

ImpactRow impact_row(const std::string& op, std::uint64_t bytes, const std::string& pattern,
                     const std::vector<TrialPair>& trials) {
  ImpactRow row;
  row.op = op;
  row.bytes = bytes;
  row.pattern = pattern;
  const auto iso = pooled(trials, false);
  const auto con = pooled(trials, true);
  row.isolated_samples = iso.size();
  row.congested_samples = con.size();
  if (!iso.empty()) {
    const auto s = stats::summarize(iso);
    row.isolated_median_us = s.median;
    row.isolated_p99_us = s.p99;
  }
  if (!con.empty()) {
    const auto s = stats::summarize(con);
    row.congested_median_us = s.median;
    row.congested_p99_us = s.p99;
  }
  std::vector<std::pair<double, double>> medians, p99s;
  std::size_t fewest = std::numeric_limits<std::size_t>::max();
  for (const auto& t : trials) {
    if (t.isolated_us.empty() || t.congested_us.empty()) continue;
    fewest = std::min({fewest, t.isolated_us.size(), t.congested_us.size()});
    const auto i = stats::summarize(t.isolated_us);
    const auto c = stats::summarize(t.congested_us);
    medians.emplace_back(i.median, c.median);
    p99s.emplace_back(i.p99, c.p99);
  }
  row.median = impact_factor(medians);
  if (fewest < kMinSamplesForP99) {
    row.p99.not_computed = fmt::format("{} sample{} a phase, fewer than {}", fewest, fewest == 1 ? "" : "s",
                                       kMinSamplesForP99);
  } else {
    row.p99 = impact_factor(p99s);
  }
  return row;
}

std::string_view name(GateVerdict v) {
  switch (v) {
    case GateVerdict::pass:
      return "pass";
    case GateVerdict::above:
      return "above";
    case GateVerdict::undecidable:
      return "undecidable";
  }
  return "?";
}

GateResult apply_gate(std::vector<ImpactRow>& rows, double max_impact, double alpha) {
  std::vector<Factor*> factors;
  std::size_t skipped = 0;
  for (auto& r : rows) {
    for (Factor* f : {&r.median, &r.p99}) {
      if (f->not_computed.empty()) {
        factors.push_back(f);
      } else {
        ++skipped;
      }
    }
  }
  std::vector<double> p;
  std::vector<Factor*> tested;
  for (Factor* f : factors) {
    f->above = false;
    f->p_gate.reset();
    f->p_holm.reset();
    if (!f->shift) continue;
    f->p_gate = f->shift->p_above(std::log(max_impact));
    p.push_back(*f->p_gate);
    tested.push_back(f);
  }
  const std::vector<double> holm = compare::holm_adjust(p);
  int above = 0, untested = 0, unshown = 0;
  for (std::size_t i = 0; i < tested.size(); ++i) {
    tested[i]->p_holm = holm[i];
    tested[i]->above = holm[i] < alpha;
    above += tested[i]->above ? 1 : 0;
  }
  for (const Factor* f : factors) {
    if (!f->shift)
      ++untested;
    else if (!f->above && f->estimate > max_impact)
      ++unshown;
  }
  GateResult g;
  if (above > 0) {
    g.verdict = GateVerdict::above;
    g.exit_code = 1;
    g.reason = fmt::format(
        "{} impact factor{} shown above {:g} (one-sided paired t on trials, Holm over {} factors, "
        "alpha {:g})",
        above, above == 1 ? "" : "s", max_impact, factors.size(), alpha);
  } else if (untested > 0 || unshown > 0) {
    g.verdict = GateVerdict::undecidable;
    g.exit_code = 4;
    g.reason = untested > 0 ? fmt::format(
                                  "{} impact factor{} from fewer than 2 trials (no interval); run --trials 2 "
                                  "or more",
                                  untested, untested == 1 ? "" : "s")
                            : fmt::format(
                                  "{} impact factor{} above {:g} without the trials showing it; run more "
                                  "--trials",
                                  unshown, unshown == 1 ? "" : "s", max_impact);
  } else {
    g.reason = fmt::format("every impact factor is at most {:g}", max_impact);
  }
  if (skipped > 0) {
    g.reason += fmt::format("; {} p99 factor{} not judged (fewer than {} samples a phase: raise -n)", skipped,
                            skipped == 1 ? "" : "s", kMinSamplesForP99);
  }
  return g;
}

std::string render_table(const std::vector<ImpactRow>& rows) {
  std::string out =
      fmt::format("{:<18} {:<9} {:>21} {:>21} {:>28} {:>28}\n", "# test", "pattern", "isolated median/p99",
                  "congested median/p99", "impact median [95% CI]", "impact p99 [95% CI]");
  out += fmt::format("{:<18} {:<9} {:>21} {:>21} {:>28} {:>28}\n", "#", "", "(us)", "(us)", "(congested/isolated)",
                     "(congested/isolated)");
  for (const auto& r : rows) {
    const auto mark = [](const Factor& f) { return f.above ? "!" : " "; };
    std::string line = fmt::format("{:<18} {:<9} {:>21} {:>21} {:>27}{} {:>27}{}", test_name(r.op, r.bytes), r.pattern,
                                   us(r.isolated_median_us) + " / " + us(r.isolated_p99_us),
                                   us(r.congested_median_us) + " / " + us(r.congested_p99_us), factor_text(r.median),
                                   mark(r.median), factor_text(r.p99), mark(r.p99));
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  for (const auto& r : rows) {
    if (!r.p99.not_computed.empty()) {
      out += fmt::format("# impact p99 not computed: {} (raise -n)\n", r.p99.not_computed);
      break;
    }
  }
  return out;
}

nlohmann::json to_json(const Factor& f) {
  nlohmann::json j;
  j["estimate"] = f.estimate;
  j["ci95"] = f.ci95 ? nlohmann::json::array({f.ci95->first, f.ci95->second}) : nlohmann::json(nullptr);
  j["trials"] = f.trials;
  if (f.shift) {
    j["log_mean"] = f.shift->estimate;
    j["log_se"] = f.shift->se;
    j["df"] = f.shift->df;
  }
  if (f.p_gate) j["p_gate"] = *f.p_gate;
  if (f.p_holm) j["p_holm"] = *f.p_holm;
  if (f.p_gate) j["above"] = f.above;
  if (!f.not_computed.empty()) j["not_computed"] = f.not_computed;
  return j;
}

nlohmann::json to_json(const ImpactRow& r) {
  return {{"test", test_name(r.op, r.bytes)},
          {"op", r.op},
          {"bytes", r.bytes},
          {"pattern", r.pattern},
          {"isolated",
           {{"median_us", r.isolated_median_us}, {"p99_us", r.isolated_p99_us}, {"samples", r.isolated_samples}}},
          {"congested",
           {{"median_us", r.congested_median_us}, {"p99_us", r.congested_p99_us}, {"samples", r.congested_samples}}},
          {"impact_median", to_json(r.median)},
          {"impact_p99", to_json(r.p99)}};
}

}  // namespace ccbench::congestion
