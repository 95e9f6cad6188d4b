// Comparability of two sides: keys that must match for a comparison to mean anything, keys that
// are expected to differ (printed side by side), claim requirements, and link bandwidths. The keys,
// where they live and their roles are the table in core/run_metadata.hpp.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compare/claim.hpp"
#include "compare/load.hpp"
#include "compare/match.hpp"

namespace ccbench::compare {

struct Difference {
  std::string key;
  std::string baseline;  // "" when absent on that side
  std::string candidate;
};

struct MetadataReport {
  std::vector<Difference> differences;            // expected-to-differ keys whose values differ, then mismatches
  std::vector<std::string> mismatches;            // must-match keys that differ and are not allowed to
  std::vector<std::string> requirement_failures;  // claim requirements a side does not meet
  std::vector<std::string> warnings;
  bool requirement_unknown = false;  // a requirement could not be checked (value missing)
  // A side's link rate when its files agree on one; absent when none says or they disagree.
  std::optional<double> baseline_link_gbps;
  std::optional<double> candidate_link_gbps;
  // "100 | 200" when a side's files disagree on fabric.link_gbps (a warning says so too), else "".
  std::string baseline_link_disagreement;
  std::string candidate_link_disagreement;
};

// The value of a metadata key (core/run_metadata.hpp's table) on a side ("" when no file says);
// files that disagree are joined with " | ".
std::string side_value(const Side& side, const Scope& scope, const std::string& key);

// Throws UsageError for an --allow-mismatch key that is not a must-match key.
void check_allow_mismatch_keys(const std::set<std::string>& allowed);

MetadataReport check_metadata(const Side& baseline, const Side& candidate, const Scope& scope,
                              const std::set<std::string>& allow_mismatch, const Claim* claim);

}  // namespace ccbench::compare
