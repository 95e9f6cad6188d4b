#include "compare/metadata.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/error.hpp"
#include "core/run_metadata.hpp"

namespace ccbench::compare {
namespace {

using nlohmann::json;

std::string join_set(const std::set<std::string>& values) { return fmt::format("{}", fmt::join(values, ",")); }

// Normalises values for requirement matching: case-insensitive; for EFA generations "EFAv3",
// "efa-v3", "v3" and "3" are the same.
std::string canonical(const std::string& key, std::string v) {
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (key == "efa_generation") {
    std::string out;
    for (char c : v) {
      if (std::isdigit(static_cast<unsigned char>(c))) out += c;
    }
    return out.empty() ? v : out;
  }
  return v;
}

struct SideLink {
  std::optional<double> gbps;  // when the files that say agree
  std::string disagreement;    // "100 | 200" when they do not
};

SideLink side_link(const Side& side) {
  std::set<double> values;
  for (const auto& f : side.files) {
    if (const auto v = RunMetadata(f).link_gbps()) values.insert(*v);
  }
  SideLink out;
  if (values.size() == 1) out.gbps = *values.begin();
  if (values.size() > 1) out.disagreement = fmt::format("{}", fmt::join(values, " | "));
  return out;
}

}  // namespace

std::string side_value(const Side& side, const Scope& scope, const std::string& key) {
  std::set<std::string> values;
  // Row-derived keys describe what was measured, so they look at the rows in scope.
  if (key == "ops" || key == "dtype" || key == "redop" || key == "ranks" || key == "groups" || key == "durable" ||
      key == "cache") {
    for (const auto& f : side.files) {
      for (const auto& r : f.results) {
        if (!scope.contains(r.op, r.bytes)) continue;
        if (key == "ops") values.insert(r.op);
        if (key == "dtype") values.insert(r.dtype);
        if (key == "redop") values.insert(r.redop);
        if (key == "ranks") values.insert(std::to_string(r.ranks));
        if (key == "groups") values.insert(row_groups(r));
        if (key == "durable" && !row_durable(r).empty()) values.insert(row_durable(r));
        if (key == "cache" && !row_cache(r).empty()) values.insert(row_cache(r));
      }
    }
    return join_set(values);
  }
  for (const auto& f : side.files) {
    auto v = RunMetadata(f).text(key);
    if (!v.empty()) values.insert(v);
  }
  return fmt::format("{}", fmt::join(values, " | "));
}

void check_allow_mismatch_keys(const std::set<std::string>& allowed) {
  const auto must_match = metadata_key_names(meta_role::must_match);
  for (const auto& k : allowed) {
    if (std::find(must_match.begin(), must_match.end(), k) == must_match.end()) {
      throw UsageError(fmt::format("--allow-mismatch: unknown key '{}' (one of: {})", k, fmt::join(must_match, ", ")));
    }
  }
}

MetadataReport check_metadata(const Side& baseline, const Side& candidate, const Scope& scope,
                              const std::set<std::string>& allow_mismatch, const Claim* claim) {
  MetadataReport r;
  for (const auto key_name : metadata_key_names(meta_role::expected_to_differ)) {
    const std::string key(key_name);
    const auto b = side_value(baseline, scope, key), c = side_value(candidate, scope, key);
    if (b != c) r.differences.push_back({key, b, c});
  }
  for (const auto key_name : metadata_key_names(meta_role::must_match)) {
    const std::string key(key_name);
    const auto b = side_value(baseline, scope, key), c = side_value(candidate, scope, key);
    for (const auto* side : {&baseline, &candidate}) {
      const auto& v = side == &baseline ? b : c;
      if (v.find(" | ") != std::string::npos) {
        r.warnings.push_back(fmt::format("{} files disagree on {}: {}", side->name, key, v));
      }
    }
    if (b.empty() || c.empty()) {
      if (b != c) {
        r.warnings.push_back(fmt::format("cannot check that {} matches: the {} files do not say", key,
                                         b.empty() ? "baseline" : "candidate"));
      }
      continue;
    }
    if (b == c) continue;
    r.differences.push_back({key, b, c});
    if (allow_mismatch.contains(key)) {
      r.warnings.push_back(fmt::format("{} differs ({} vs {}); allowed by --allow-mismatch", key, b, c));
    } else {
      r.mismatches.push_back(key);
    }
  }
  // `ccbench checkpoint` rows whose throughput was above what their tier can carry ("not durable?").
  for (const auto* side : {&baseline, &candidate}) {
    std::size_t flagged = 0;
    std::string first;
    for (const auto& f : side->files) {
      for (const auto& row : f.results) {
        const auto p = row.extra.find("plausibility");
        if (!scope.contains(row.op, row.bytes) || p == row.extra.end() || !p->is_string()) continue;
        if (flagged++ == 0) first = fmt::format("{} trial {}: {}", row.op, row.trial, p->get<std::string>());
      }
    }
    if (flagged > 0) r.warnings.push_back(fmt::format("{}: {} row(s) flagged, e.g. {}", side->name, flagged, first));
  }
  // Link rates (for normalisation): a side whose files disagree has no one rate, and says so.
  for (const auto& [side, gbps, disagreement] :
       {std::tuple{&baseline, &r.baseline_link_gbps, &r.baseline_link_disagreement},
        std::tuple{&candidate, &r.candidate_link_gbps, &r.candidate_link_disagreement}}) {
    const SideLink link = side_link(*side);
    *gbps = link.gbps;
    *disagreement = link.disagreement;
    if (!link.disagreement.empty()) {
      r.warnings.push_back(fmt::format(
          "{} files disagree on link_gbps (fabric.link_gbps: {}): the {} has no one link rate, so its ratios "
          "cannot be normalised by link bandwidth",
          side->name, link.disagreement, side->name));
    }
  }
  if (claim != nullptr) {
    for (const auto& [side, reqs] :
         {std::pair{&baseline, &claim->baseline}, std::pair{&candidate, &claim->candidate}}) {
      for (const auto& [key, accepted] : *reqs) {
        const auto value = side_value(*side, scope, key);
        if (value.empty()) {
          r.requirement_unknown = true;
          r.warnings.push_back(fmt::format("the claim requires {} {} in {{{}}}, but the {} files do not record {}",
                                           side->name, key, fmt::join(accepted, ", "), side->name, key));
          continue;
        }
        const bool ok = std::any_of(accepted.begin(), accepted.end(),
                                    [&](const std::string& a) { return canonical(key, a) == canonical(key, value); });
        if (!ok) {
          r.requirement_failures.push_back(fmt::format("the claim requires {} {} in {{{}}}, but it is {}", side->name,
                                                       key, fmt::join(accepted, ", "), value));
        }
      }
    }
  }
  return r;
}

}  // namespace ccbench::compare
