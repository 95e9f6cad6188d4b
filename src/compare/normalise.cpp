#include "compare/normalise.hpp"

#include <fmt/format.h>

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
      warnings.push_back(fmt::format(
          "normalisation by link bandwidth was asked for, but fabric.link_gbps is missing on the {}: the ratio "
          "cannot be normalised, so no claim verdict is possible (raw ratios shown)",
          !n.baseline_link_gbps && !n.candidate_link_gbps ? "baseline and candidate"
          : !n.baseline_link_gbps                         ? "baseline"
                                                          : "candidate"));
    }
  } else if (factor && *n.baseline_link_gbps != *n.candidate_link_gbps) {
    warnings.push_back(fmt::format(
        "link bandwidth differs ({} vs {} Gbps): ratios are raw and include the {:.2f}x link; the summary also "
        "gives them normalised by link bandwidth (--normalize link_bandwidth to use those)",
        *n.baseline_link_gbps, *n.candidate_link_gbps, *n.candidate_link_gbps / *n.baseline_link_gbps));
  }
  return n;
}

}  // namespace ccbench::compare
