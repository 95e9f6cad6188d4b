#include "compare/metadata.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace ccbench::compare {
namespace {

using nlohmann::json;

std::string to_text(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) {
    const double d = v.get<double>();
    // Only a whole number inside long long's range is printed as an integer (a cast of 1e300 or
    // NaN to an integer is undefined behaviour).
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < 9.2e18) return std::to_string(static_cast<long long>(d));
    return fmt::format("{}", d);
  }
  return v.dump();
}

const json* lookup(const json& root, std::initializer_list<const char*> path) {
  const json* cur = &root;
  for (const char* k : path) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(k);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

// The value of `key` in one file, "" when the file does not say.
std::string file_value(const ResultFile& f, const std::string& key) {
  auto at = [&](const json& root, std::initializer_list<const char*> path) {
    const json* v = lookup(root, path);
    return v ? to_text(*v) : std::string();
  };
  if (key == "schema_version") return std::to_string(f.schema_version);
  if (key == "ranks_per_node") return at(f.system, {"ranks_per_node"});
  if (key == "timing") {
    const json* t = lookup(f.config, {"timing"});
    if (t == nullptr) return "";
    if (t->is_object()) return t->contains("method") ? to_text((*t)["method"]) : std::string();
    return to_text(*t);
  }
  if (key == "iteration_policy") {
    const json* it = lookup(f.config, {"iters"});
    if (it == nullptr || it->is_null()) return "";
    if (it->is_string() && it->get<std::string>() == "auto") return "auto";
    return "fixed";
  }
  if (key == "instance_type") return at(f.system, {"instance_type"});
  if (key == "nodes") return at(f.system, {"nodes"});
  if (key == "efa_generation") return at(f.fabric, {"generation"});
  if (key == "fabric_path") return at(f.fabric, {"path"});
  if (key == "provider") return at(f.fabric, {"provider"});
  if (key == "link_gbps") return at(f.fabric, {"link_gbps"});
  if (key == "backend") return at(f.config, {"backend"});
  if (key == "label") return f.run.label;
  if (key == "gpu") {
    const json* hosts = lookup(f.system, {"hosts"});
    if (hosts && hosts->is_array() && !hosts->empty()) {
      const json* gpus = lookup((*hosts)[0], {"gpus"});
      if (gpus && gpus->is_array() && !gpus->empty()) {
        const auto& g = (*gpus)[0];
        return g.is_object() ? at(g, {"name"}) : to_text(g);
      }
    }
    return "";
  }
  if (key == "driver") {
    std::string d = at(f.software, {"driver"});
    return d.empty() ? at(f.software, {"cuda_driver"}) : d;
  }
  for (const char* sw : {"nccl", "ofi_nccl", "libfabric", "mpi", "cuda"}) {
    if (key == sw) return at(f.software, {sw});
  }
  return "";
}

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

std::optional<double> link_gbps(const Side& side) {
  std::optional<double> out;
  for (const auto& f : side.files) {
    const json* v = lookup(f.fabric, {"link_gbps"});
    if (v && v->is_number() && v->get<double>() > 0) {
      if (out && *out != v->get<double>()) return std::nullopt;  // files disagree: reported as a warning
      out = v->get<double>();
    }
  }
  return out;
}

}  // namespace

std::string side_value(const Side& side, const Scope& scope, const std::string& key) {
  std::set<std::string> values;
  // Row-derived keys describe what was measured, so they look at the rows in scope.
  if (key == "ops" || key == "dtype" || key == "redop" || key == "ranks") {
    for (const auto& f : side.files) {
      for (const auto& r : f.results) {
        if (!scope.contains(r.op, r.bytes)) continue;
        if (key == "ops") values.insert(r.op);
        if (key == "dtype") values.insert(r.dtype);
        if (key == "redop") values.insert(r.redop);
        if (key == "ranks") values.insert(std::to_string(r.ranks));
      }
    }
    return join_set(values);
  }
  for (const auto& f : side.files) {
    auto v = file_value(f, key);
    if (!v.empty()) values.insert(v);
  }
  return fmt::format("{}", fmt::join(values, " | "));
}

void check_allow_mismatch_keys(const std::set<std::string>& allowed) {
  for (const auto& k : allowed) {
    if (std::find_if(std::begin(kMustMatchKeys), std::end(kMustMatchKeys), [&](const char* m) { return k == m; }) ==
        std::end(kMustMatchKeys)) {
      throw UsageError(
          fmt::format("--allow-mismatch: unknown key '{}' (one of: {})", k, fmt::join(kMustMatchKeys, ", ")));
    }
  }
}

MetadataReport check_metadata(const Side& baseline, const Side& candidate, const Scope& scope,
                              const std::set<std::string>& allow_mismatch, const Claim* claim) {
  MetadataReport r;
  static const char* kExpectedToDiffer[] = {
      "instance_type", "efa_generation", "link_gbps", "fabric_path", "provider", "backend", "gpu",  "nodes",
      "nccl",          "ofi_nccl",       "libfabric", "mpi",         "cuda",     "driver",  "label"};
  for (const char* key : kExpectedToDiffer) {
    const auto b = side_value(baseline, scope, key), c = side_value(candidate, scope, key);
    if (b != c) r.differences.push_back({key, b, c});
  }
  for (const char* key : kMustMatchKeys) {
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
  r.baseline_link_gbps = link_gbps(baseline);
  r.candidate_link_gbps = link_gbps(candidate);
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
