#include "compare/decide.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "compare/compare.hpp"
#include "compare/gate.hpp"
#include "compare/metadata.hpp"
#include "compare/normalise.hpp"
#include "compare/trials_needed.hpp"
#include "compare/verdict.hpp"

namespace ccbench::compare {

namespace {

constexpr std::array<std::pair<Verdict, std::string_view>, 7> kNames{{
    {Verdict::none, "none"},
    {Verdict::confirmed, "confirmed"},
    {Verdict::refuted, "refuted"},
    {Verdict::inconclusive, "inconclusive"},
    {Verdict::pass, "pass"},
    {Verdict::regression, "regression"},
    {Verdict::not_comparable, "not_comparable"},
}};

// Missing must-match agreement, an unmet claim requirement or nothing to compare.
std::string not_comparable_reason(const Comparison& c, const MetadataReport& meta) {
  std::vector<std::string> why;
  for (const auto& k : c.mismatches) {
    const auto it =
        std::find_if(c.differences.begin(), c.differences.end(), [&](const Difference& d) { return d.key == k; });
    why.push_back(
        fmt::format("{} differs ({} vs {}; --allow-mismatch {} to compare anyway)", k, it->baseline, it->candidate, k));
  }
  for (const auto& f : meta.requirement_failures) why.push_back(f);
  if (c.rows.empty()) why.push_back("no size is present on both sides within the scope");
  return fmt::format("{}", fmt::join(why, "; "));
}

// "; about 9 launches per side (have 5) would likely decide it" from the projection of the observed
// spread (trials_needed.hpp), or why more launches alone may not.
void plan_rerun(Comparison& c, const Claim& claim, int min_trials, int have) {
  if (const auto n = trials_to_decide(c, claim, min_trials)) {
    c.trials_needed = *n;
    // Trials that share a launch are not the launches asked for (issue 27 item 19): named as trials.
    const bool separate = static_cast<std::size_t>(c.baseline.trials) == c.baseline.files &&
                          static_cast<std::size_t>(c.candidate.trials) == c.candidate.files;
    const std::string had = separate ? fmt::format("{}", have) : fmt::format("{} trials, not separate launches", have);
    c.reason +=
        fmt::format("; about {} launches per side (have {}) would likely decide it, from the observed spread{}", *n,
                    had, c.drift_changed_verdict ? ", with the sides' launches alternating (A B A B ...)" : "");
  } else if (c.summary.ci_method == CiMethod::t && have >= min_trials) {
    c.trials_needed.reset();
    c.reason += "; the estimate sits on the edge of the band, so more launches alone may not decide it";
  }
}

// The rule the verdict used, appended to every claim and gate reason (and so to every form of it).
std::string looks_note(const LookRule& r, bool gate) {
  if (r.looks == Looks::once) {
    return "; looks: once (valid for a launch count fixed in advance; asking again after adding launches raises "
           "the error rate, which --looks sequential keeps)";
  }
  if (gate) {
    return fmt::format(
        "; looks: sequential (valid when asked again after adding launches, from {} to {} a side: p-values made "
        "sequential before Holm)",
        r.first_look, r.last_look);
  }
  return fmt::format(
      "; looks: sequential (valid when asked again after adding launches, from {} to {} a side: at {} launches "
      "each side of the 95% interval at {:.2g} where one look uses 0.025)",
      r.first_look, r.last_look, std::clamp(r.look, r.first_look, r.last_look), r.per_look(0.025));
}

// The max's spread rule, appended to its claim reasons as the looks rule is.
std::string spread_note(const Summary& s) {
  if (s.spread == Spread::per_size) return "; spread: per-size (each size's bounds from its own launches)";
  const SpreadPrior& p = s.spread_prior_pooled;
  return fmt::format(
      "; spread: moderated (each size's launch spread shrunk toward the sizes' shared spread, prior df {})",
      std::isinf(p.df) ? std::string("infinite") : fmt::format("{:.3g}", p.df));
}

void decide_claim_verdict(Comparison& c, const Claim& claim, const MetadataReport& meta, const Normalisation& norm,
                          int min_trials) {
  const auto& s = c.summary.used_normalised();
  const int trials = std::min(c.baseline.trials, c.candidate.trials);
  ClaimDecision d = decide_claim(claim, s.ratio, s.ci90, s.ci95, trials, min_trials);
  if (drift_detected(c.summary) && d.verdict != Verdict::inconclusive) {
    // Inconclusive only where the drift can decide it: the verdict must hold with both intervals
    // widened by the largest bias the drift can put between the sides.
    const double bias = std::exp(drift_bias_log(c));
    auto widen = [bias](const std::optional<Interval>& i) -> std::optional<Interval> {
      if (!i) return i;
      return Interval{i->first / bias, i->second * bias};
    };
    const ClaimDecision widened = decide_claim(claim, s.ratio, widen(s.ci90), widen(s.ci95), trials, min_trials);
    if (widened.verdict == d.verdict) {
      d.reason = fmt::format(
          "{} (the launches drift, see warnings, but the verdict holds with the intervals widened by "
          "the drift's largest bias between the sides, {:.2f}%)",
          d.reason, (bias - 1.0) * 100.0);
    } else {
      d.reason = fmt::format(
          "would be {}, but the launches drift (see warnings) by up to {:.2f}% between the sides, which can decide "
          "it: {}",
          name(d.verdict), (bias - 1.0) * 100.0, d.reason);
      d.verdict = Verdict::inconclusive;
      c.drift_changed_verdict = true;
    }
  }
  const bool undecidable = norm.missing || meta.requirement_unknown;  // more launches would not help
  if (norm.missing) {
    d.verdict = Verdict::inconclusive;
    d.reason = "the claim compares link-normalised ratios, but " + norm.missing_reason + ": " + d.reason;
  } else if (meta.requirement_unknown && d.verdict != Verdict::inconclusive) {
    d.reason = fmt::format("would be {}, but a claim requirement cannot be checked (see warnings): {}", name(d.verdict),
                           d.reason);
    d.verdict = Verdict::inconclusive;
  }
  c.verdict = d.verdict;
  c.reason = d.reason;
  c.trials_needed = d.trials_needed;
  if (c.verdict == Verdict::inconclusive && !undecidable) plan_rerun(c, claim, min_trials, trials);
}

}  // namespace

std::string_view name(Verdict verdict) {
  for (const auto& [v, n] : kNames) {
    if (v == verdict) return n;
  }
  return "none";
}

std::optional<Verdict> parse_verdict(std::string_view text) {
  for (const auto& [v, n] : kNames) {
    if (n == text) return v;
  }
  return std::nullopt;
}

int exit_code(Verdict verdict) {
  switch (verdict) {
    case Verdict::none:
    case Verdict::confirmed:
    case Verdict::pass:
      return 0;
    case Verdict::refuted:
    case Verdict::regression:
      return 1;
    case Verdict::not_comparable:
      return 3;
    case Verdict::inconclusive:
      return 4;
  }
  return 0;
}

void decide(Comparison& c, const CompareOptions& o, const MetadataReport& meta, const Normalisation& norm) {
  if (!c.mismatches.empty() || !meta.requirement_failures.empty() || c.rows.empty()) {
    c.verdict = Verdict::not_comparable;
    c.reason = not_comparable_reason(c, meta);
  } else if (o.gate) {
    apply_gate(c, *o.gate);
    c.reason += looks_note(c.summary.looks, true);
  } else if (o.claim) {
    decide_claim_verdict(c, *o.claim, meta, norm, o.min_trials);
    c.reason += looks_note(c.summary.looks, false);
    if (c.summary.statistic == Statistic::max) c.reason += spread_note(c.summary);
  } else {
    c.verdict = Verdict::none;
    c.reason = "no claim and no gate: report only";
  }
}

}  // namespace ccbench::compare
