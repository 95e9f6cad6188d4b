#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "compare/render.hpp"
#include "core/percentiles.hpp"
#include "core/sizes.hpp"

namespace ccbench::compare::compare_cells {

using compare::Comparison;
using compare::Metric;

namespace {

std::string value(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1000) return fmt::format("{:.0f}", v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  if (a >= 10) return fmt::format("{:.2f}", v);
  if (a >= 1) return fmt::format("{:.3f}", v);
  return fmt::format("{:.3g}", v);
}

std::string side_cell(const compare::SideAtSize& s, Metric metric) {
  const double v = metric == Metric::busbw ? s.busbw_gbps : s.median_us;
  const auto& ci = metric == Metric::busbw ? s.busbw_ci : s.ci_us;
  if (s.summary) return value(v) + " (summary)";
  if (!ci) return value(v) + " ±?";
  const double dev = std::max(v - ci->first, ci->second - v) / v * 100.0;
  return fmt::format("{} ±{}%", value(v), dev < 10 ? fmt::format("{:.1f}", dev) : fmt::format("{:.0f}", dev));
}

// "6 vs 6 launches" when every trial is a launch of its own (a file each, as scripts/launches.sh
// leaves them); "5 vs 5 trials in 1 launch each" when trials share a launch (`run --trials 5`),
// whose trials are not independent launches and must not be called so.
std::string trials_and_launches(const compare::SideInfo& base, const compare::SideInfo& cand) {
  if (static_cast<std::size_t>(base.trials) == base.files && static_cast<std::size_t>(cand.trials) == cand.files) {
    return fmt::format("{} vs {} launches", base.trials, cand.trials);
  }
  if (base.files == cand.files) {
    return fmt::format("{} vs {} trials in {} launch{} each", base.trials, cand.trials, base.files,
                       base.files == 1 ? "" : "es");
  }
  return fmt::format("{} vs {} trials in {} vs {} launches", base.trials, cand.trials, base.files, cand.files);
}

std::string interval(const std::optional<compare::Interval>& ci) {
  if (!ci) return "n/a";
  return fmt::format("[{:.3f}, {:.3f}]", ci->first, ci->second);
}

std::string p_cell(double p) { return p < 0.001 ? "<0.001" : fmt::format("{:.3f}", p); }

std::string ratio_cell(double r) { return fmt::format("{:.3f}x", r); }

}  // namespace

std::vector<std::string> header(const Comparison& c) {
  const std::string unit = c.metric == Metric::busbw ? "busbw GB/s" : "time us";
  std::vector<std::string> h = {
      "op", "bytes",     fmt::format("baseline {}", unit), fmt::format("candidate {}", unit), "ratio", "95% CI",
      "p",  "n (trials)"};
  if (c.gate) {
    h.push_back("gate p (Holm)");
    h.push_back("gate");
  }
  return h;
}

std::vector<std::vector<std::string>> body(const Comparison& c) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : c.rows) {
    std::string op = r.key.op;
    if (r.key.in_place) op += " (in-place)";
    if (r.key.dtype != "float") op += fmt::format(" {}", r.key.dtype);
    if (!r.key.matrix.empty()) op += fmt::format(" ({})", r.key.matrix);
    std::vector<std::string> row = {op,
                                    format_bytes(r.key.bytes),
                                    side_cell(r.baseline, c.metric),
                                    side_cell(r.candidate, c.metric),
                                    r.significant ? ratio_cell(r.ratio) : fmt::format("~ {}", ratio_cell(r.ratio)),
                                    interval(r.ci),
                                    p_cell(r.p_value),
                                    fmt::format("{}/{}", r.baseline.trials, r.candidate.trials)};
    if (c.gate) {
      row.push_back(r.p_holm ? p_cell(*r.p_holm) : "");
      row.push_back(r.regression ? "FAIL" : "ok");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> summary_lines(const Comparison& c) {
  std::vector<std::string> out;
  if (c.rows.empty()) return out;
  const auto& s = c.summary;
  const std::string tag = s.normalized ? " (normalised by link bandwidth)" : "";
  const bool step = s.statistic == compare::Statistic::step;
  // --statistic step: the geomean over the step row alone is the step's own ratio; no max to show.
  if (step) {
    out.push_back(fmt::format("step (communication time per step, baseline/candidate): {} 95% CI {} 90% CI {}{}{}",
                              ratio_cell(s.geomean_used.ratio), interval(s.geomean_used.ci95),
                              interval(s.geomean_used.ci90), tag, c.claim ? "  <- claim statistic" : ""));
    out.push_back(fmt::format("trace: sha256 {} (both sides)", c.trace_sha256));
  } else {
    out.push_back(fmt::format("geomean over {} sizes: {} 95% CI {} 90% CI {}{}{}", s.sizes,
                              ratio_cell(s.geomean_used.ratio), interval(s.geomean_used.ci95),
                              interval(s.geomean_used.ci90), tag,
                              s.statistic == compare::Statistic::geomean && c.claim ? "  <- claim statistic" : ""));
    out.push_back(fmt::format("max ({}): {} 95% CI {} 90% CI {}{}{}", s.max.at ? compare::format_key(*s.max.at) : "",
                              ratio_cell(s.max_used.ratio), interval(s.max_used.ci95), interval(s.max_used.ci90), tag,
                              s.statistic == compare::Statistic::max && c.claim ? "  <- claim statistic" : ""));
  }
  const bool links_differ =
      c.baseline.link_gbps && c.candidate.link_gbps && *c.baseline.link_gbps != *c.candidate.link_gbps;
  if (links_differ && s.link_normalised) {
    const auto& u = s.used();
    out.push_back(fmt::format("{}: raw {} {} | normalised by link bandwidth ({} -> {} Gbps) {} {}",
                              compare::name(s.statistic), ratio_cell(u.ratio), interval(u.ci95), *c.baseline.link_gbps,
                              *c.candidate.link_gbps, ratio_cell(s.link_normalised->ratio),
                              interval(s.link_normalised->ci95)));
  }
  if (s.ci_method == compare::CiMethod::t && step) {
    out.push_back(
        fmt::format("CIs: t interval on trials ({}), the step row's", trials_and_launches(c.baseline, c.candidate)));
  } else if (s.ci_method == compare::CiMethod::t) {
    out.push_back(
        fmt::format("CIs: t intervals on trials ({}); the max is the table's largest ratio (biased upward by "
                    "noise) and its lower bound holds for all sizes at once (per-size level {:.2g} at 95%, {})",
                    trials_and_launches(c.baseline, c.candidate), s.max_lower_level95,
                    s.resamples > 0 ? fmt::format("from {} resampled launch sets", s.resamples)
                                    : fmt::format("Bonferroni over {} sizes", c.rows.size())));
  }
  if (c.trials_needed && c.verdict == compare::Verdict::inconclusive) {
    // Trials that share a launch are not the launches this asks for: said so, not counted as them.
    const bool separate = static_cast<std::size_t>(c.baseline.trials) == c.baseline.files &&
                          static_cast<std::size_t>(c.candidate.trials) == c.candidate.files;
    const std::string have = separate ? fmt::format("{} and {}", c.baseline.trials, c.candidate.trials)
                                      : trials_and_launches(c.baseline, c.candidate);
    out.push_back(fmt::format("to decide: about {} launches per side (have {}), from the observed spread{}",
                              *c.trials_needed, have,
                              c.drift_changed_verdict ? ", with baseline and candidate launches alternating" : ""));
  }
  const bool pooled =
      std::any_of(c.rows.begin(), c.rows.end(), [](const auto& r) { return r.unit == compare::Unit::samples; });
  out.push_back(pooled ? "per-size CIs are the precision inside a launch (pooled samples), not across launches; "
                         "separate launches give an honest interval (scripts/launches.sh)"
                       : "per-size CIs are across launches (trials as the unit)");
  return out;
}

std::string claim_line(const Comparison& c) {
  if (!c.claim) return "";
  const auto& k = *c.claim;
  std::string s = k.statement.empty() ? std::string("claim") : fmt::format("claim: \"{}\"", k.statement);
  s += fmt::format(
      " (expected speedup {:+.1f}% ± {:.1f}% -> ratio band [{:.3f}, {:.3f}]; statistic {}; metric {}; "
      "normalize {}",
      k.expected_speedup * 100.0, k.tolerance * 100.0, k.lower(), k.upper(), compare::name(k.statistic),
      compare::name(k.metric), compare::name(c.normalize));
  if (k.expected_time_reduction) s += fmt::format("; from {:.0f}% lower time", *k.expected_time_reduction * 100.0);
  s += ")";
  if (!k.source.empty()) s += fmt::format(" source: {}", k.source);
  return s;
}

std::string verdict_line(const Comparison& c) {
  std::string s = fmt::format("verdict: {} (exit {})", compare::name(c.verdict), compare::exit_code(c.verdict));
  if (!c.reason.empty()) s += fmt::format(": {}", c.reason);
  return s;
}

std::string side_line(const compare::SideInfo& s) {
  return fmt::format("{} ({} file{}, {} trial{}{})", fmt::join(s.inputs, ", "), s.files, s.files == 1 ? "" : "s",
                     s.trials, s.trials == 1 ? "" : "s",
                     s.link_gbps ? fmt::format(", link {} Gbps", *s.link_gbps) : std::string());
}

std::string metric_line(const Comparison& c) {
  // --statistic pNN: every per-size number is the pNN (pooled, and each trial's for the tests).
  const std::string statistic =
      c.row_percentile ? percentiles::key(*c.row_percentile) + " of per-iteration times" : "median";
  return c.metric == Metric::busbw
             ? fmt::format(
                   "metric busbw (GB/s, {} ± 95% CI); ratio = candidate/baseline busbw, >1 = candidate faster; "
                   "~ = not significant (Mann-Whitney p >= 0.05)",
                   statistic)
             : fmt::format(
                   "metric time (us, {} ± 95% CI); ratio = baseline/candidate time, >1 = candidate faster; "
                   "~ = not significant (Mann-Whitney p >= 0.05)",
                   statistic);
}

}  // namespace ccbench::compare::compare_cells
