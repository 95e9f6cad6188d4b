// Normalisation by link bandwidth: one factor (baseline link / candidate link), computed once here.
// Raw ratios times the factor are the normalised ones; the verdict uses them when normalisation is
// asked for and both sides' links are known.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compare/claim.hpp"

namespace ccbench::compare {

struct MetadataReport;

struct Normalisation {
  Normalize mode = Normalize::none;  // what was asked for
  double factor = 1.0;               // applied to the verdict's ratios; 1 unless `applied`
  bool applied = false;              // mode is link_bandwidth and both links are known
  bool missing = false;              // mode is link_bandwidth but a side's link is unknown
  std::optional<double> baseline_link_gbps;
  std::optional<double> candidate_link_gbps;
  // baseline link / candidate link whenever both are known (shown beside raw ratios), else absent.
  std::optional<double> link_factor() const;
};

// Appends the warning about missing or differing links to `warnings`.
Normalisation normalise(Normalize mode, const MetadataReport& metadata, std::vector<std::string>& warnings);

}  // namespace ccbench::compare
