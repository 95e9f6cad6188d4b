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
  std::string missing_reason;        // "fabric.link_gbps is missing on the baseline", when missing
  std::optional<double> baseline_link_gbps;
  std::optional<double> candidate_link_gbps;
  // baseline link / candidate link whenever both are known (shown beside raw ratios), else absent.
  std::optional<double> link_factor() const;
};

// Appends the warning about missing or differing links to `warnings`.
Normalisation normalise(Normalize mode, const MetadataReport& metadata, std::vector<std::string>& warnings);

struct StatisticValue;
struct Summary;
// A statistic with its ratio and intervals times `factor`.
StatisticValue scaled(const StatisticValue& value, double factor);
// Fills summary.normalization/normalized, geomean_used, max_used, link_normalised, link_factor.
void apply_normalisation(Summary& summary, const Normalisation& normalisation);

}  // namespace ccbench::compare
