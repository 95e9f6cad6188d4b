#include "compare/normalise.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tuple>

#include "compare/compare.hpp"
#include "compare/metadata.hpp"

namespace ccbench::compare {

std::optional<double> Normalisation::link_factor() const {
  if (!baseline_link_gbps || !candidate_link_gbps) return std::nullopt;
  return *baseline_link_gbps / *candidate_link_gbps;
}

Normalisation normalise(Normalize mode, const MetadataReport& meta, std::vector<std::string>& warnings) {
  Normalisation n;
  n.mode = mode;
  n.baseline_link_gbps = meta.baseline_link_gbps;
  n.candidate_link_gbps = meta.candidate_link_gbps;
  const auto factor = n.link_factor();
  if (mode == Normalize::link_bandwidth) {
    if (factor) {
      n.factor = *factor;
      n.applied = true;
    } else {
      n.missing = true;
      // Per side: absent, or its files disagree (one more warning, from the metadata check, lists them).
      std::vector<std::string> why;
      for (const auto& [side, link, disagreement] :
           {std::tuple{"baseline", n.baseline_link_gbps, meta.baseline_link_disagreement},
            std::tuple{"candidate", n.candidate_link_gbps, meta.candidate_link_disagreement}}) {
        if (link) continue;
        why.push_back(disagreement.empty() ? fmt::format("missing on the {}", side)
                                           : fmt::format("not one value on the {} ({})", side, disagreement));
      }
      n.missing_reason = fmt::format("fabric.link_gbps is {}", fmt::join(why, " and "));
      warnings.push_back(fmt::format(
          "normalisation by link bandwidth was asked for, but {}: the ratio cannot be normalised, so no claim "
          "verdict is possible (raw ratios shown)",
          n.missing_reason));
    }
  } else if (factor && *n.baseline_link_gbps != *n.candidate_link_gbps) {
    warnings.push_back(fmt::format(
        "link bandwidth differs ({} vs {} Gbps): ratios are raw and include the {:.2f}x link; the summary also "
        "gives them normalised by link bandwidth (--normalize link_bandwidth to use those)",
        *n.baseline_link_gbps, *n.candidate_link_gbps, *n.candidate_link_gbps / *n.baseline_link_gbps));
  }
  return n;
}

StatisticValue scaled(const StatisticValue& value, double factor) {
  StatisticValue out = value;
  out.ratio = value.ratio * factor;
  for (auto* ci : {&out.ci95, &out.ci90}) {
    if (*ci) **ci = Interval{(*ci)->first * factor, (*ci)->second * factor};
  }
  return out;
}

void apply_normalisation(Summary& s, const Normalisation& n) {
  s.normalization = n.factor;
  s.normalized = n.applied;
  s.geomean_used = scaled(s.geomean, n.factor);
  s.max_used = scaled(s.max, n.factor);
  s.link_factor = n.link_factor();
  if (s.link_factor) s.link_normalised = scaled(s.used(), *s.link_factor);
}

}  // namespace ccbench::compare
