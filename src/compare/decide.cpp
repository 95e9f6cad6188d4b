#include "compare/decide.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <utility>

#include "compare/compare.hpp"
#include "compare/gate.hpp"
#include "compare/metadata.hpp"
#include "compare/normalise.hpp"
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

void decide_claim_verdict(Comparison& c, const Claim& claim, const MetadataReport& meta, const Normalisation& norm,
                          int min_trials) {
  const auto& s = c.summary.used_normalised();
  const int trials = std::min(c.baseline.trials, c.candidate.trials);
  ClaimDecision d = decide_claim(claim, s.ratio, s.ci90, s.ci95, trials, min_trials);
  if (drift_detected(c.summary) && d.verdict != Verdict::inconclusive) {
    d.reason = fmt::format("would be {}, but the launches drift (see warnings), which can decide it: {}",
                           name(d.verdict), d.reason);
    d.verdict = Verdict::inconclusive;
  }
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
  } else if (o.claim) {
    decide_claim_verdict(c, *o.claim, meta, norm, o.min_trials);
  } else {
    c.verdict = Verdict::none;
    c.reason = "no claim and no gate: report only";
  }
}

}  // namespace ccbench::compare
