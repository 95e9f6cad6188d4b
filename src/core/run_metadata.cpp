#include "core/run_metadata.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>

namespace ccbench {

namespace {

using nlohmann::json;
namespace r = meta_role;

constexpr unsigned kDiffer = r::expected_to_differ;
constexpr unsigned kClaim = r::claim_requirement;

constexpr std::array<MetadataKey, 27> kKeys{{
    // Must match for a comparison to mean anything (also the spellings --allow-mismatch accepts).
    {"ops", "results[].op", r::must_match | r::per_row, ""},
    {"dtype", "results[].dtype", r::must_match | r::per_row, ""},
    {"redop", "results[].redop", r::must_match | r::per_row, ""},
    {"ranks", "results[].ranks", r::must_match | r::per_row, ""},
    // --groups: concurrent groups' rows are never pooled with, or compared to, a lone communicator's.
    {"groups", "results[].groups.spec", r::must_match | r::per_row, ""},
    // `ccbench checkpoint`: a --no-fsync row is never set against a durable one, nor a warm read
    // (no cache drop worked) against a cold one.
    {"durable", "results[].durable", r::must_match | r::per_row, ""},
    {"cache", "results[].cache_drop", r::must_match | r::per_row, ""},
    {"ranks_per_node", "system.ranks_per_node", r::must_match, ""},
    {"timing", "config.timing", r::must_match, ""},
    {"iteration_policy", "config.iters", r::must_match, ""},
    {"schema_version", "schema_version", r::must_match, ""},
    // run -R: registered or window buffers change which NCCL algorithms run (none when absent).
    {"registration", "config.registration", r::must_match, ""},
    // Expected to differ between the sides of a comparison: listed side by side.
    {"instance_type", "system.instance_type", kDiffer | kClaim | r::report_column, ""},
    {"efa_generation", "fabric.generation", kDiffer | kClaim | r::report_column | r::prometheus_label,
     "efa_generation"},
    {"link_gbps", "fabric.link_gbps", kDiffer | kClaim, ""},
    {"fabric_path", "fabric.path", kDiffer | kClaim | r::report_column | r::prometheus_label, "fabric_path"},
    {"provider", "fabric.provider", kDiffer | kClaim | r::prometheus_label, "fabric_provider"},
    {"backend", "config.backend", kDiffer | kClaim | r::report_column | r::prometheus_label, "backend"},
    {"gpu", "system.hosts[0].gpus[0].name", kDiffer | kClaim, ""},
    {"nodes", "system.nodes", kDiffer | r::report_column | r::prometheus_label, "nodes"},
    {"nccl", "software.nccl", kDiffer | r::report_column | r::prometheus_label, "nccl"},
    {"ofi_nccl", "software.ofi_nccl", kDiffer | r::prometheus_label, "ofi_nccl"},
    {"libfabric", "software.libfabric", kDiffer | r::prometheus_label, "libfabric"},
    {"mpi", "software.mpi", kDiffer | r::report_column | r::prometheus_label, "mpi"},
    {"cuda", "software.cuda", kDiffer | r::prometheus_label, "cuda"},
    {"driver", "software.driver", kDiffer, ""},
    {"label", "run.label", kDiffer, ""},
}};

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

std::optional<std::string> text_at(const json& root, std::initializer_list<const char*> path) {
  const json* v = lookup(root, path);
  if (v == nullptr) return std::nullopt;
  std::string t = metadata_text(*v);
  if (t.empty()) return std::nullopt;
  return t;
}

std::optional<std::int64_t> integer_at(const json& root, std::initializer_list<const char*> path) {
  const json* v = lookup(root, path);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
  return v->get<std::int64_t>();
}

}  // namespace

std::span<const MetadataKey> metadata_keys() { return kKeys; }

const MetadataKey* find_metadata_key(std::string_view name) {
  for (const auto& k : kKeys) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::vector<std::string_view> metadata_key_names(unsigned role) {
  std::vector<std::string_view> out;
  for (const auto& k : kKeys) {
    if ((k.roles & role) != 0) out.push_back(k.name);
  }
  return out;
}

std::string metadata_text(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number()) {
    const double d = v.get<double>();
    // Integral values print without a decimal point (200.0 -> "200"); the range check keeps the
    // conversion defined (1e300 prints as a float).
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
      return std::to_string(static_cast<long long>(d));
    }
    return fmt::format("{}", d);
  }
  return v.dump();
}

std::optional<std::string> RunMetadata::fabric_path() const { return text_at(file_.fabric, {"path"}); }
std::optional<std::string> RunMetadata::provider() const { return text_at(file_.fabric, {"provider"}); }
std::optional<std::string> RunMetadata::efa_generation() const { return text_at(file_.fabric, {"generation"}); }

std::optional<double> RunMetadata::link_gbps() const {
  const json* v = lookup(file_.fabric, {"link_gbps"});
  if (v == nullptr || !v->is_number()) return std::nullopt;
  const double d = v->get<double>();
  if (!std::isfinite(d) || !(d > 0)) return std::nullopt;
  return d;
}

std::optional<std::string> RunMetadata::instance_type() const { return text_at(file_.system, {"instance_type"}); }
std::optional<std::int64_t> RunMetadata::nodes() const { return integer_at(file_.system, {"nodes"}); }
std::optional<std::int64_t> RunMetadata::ranks() const { return integer_at(file_.system, {"ranks"}); }
std::optional<std::int64_t> RunMetadata::ranks_per_node() const { return integer_at(file_.system, {"ranks_per_node"}); }
std::optional<std::string> RunMetadata::backend() const { return text_at(file_.config, {"backend"}); }

std::optional<std::string> RunMetadata::gpu() const {
  const json* hosts = lookup(file_.system, {"hosts"});
  if (hosts == nullptr || !hosts->is_array() || hosts->empty()) return std::nullopt;
  const json* gpus = lookup((*hosts)[0], {"gpus"});
  if (gpus == nullptr || !gpus->is_array() || gpus->empty()) return std::nullopt;
  const auto& g = (*gpus)[0];
  if (g.is_object()) return text_at(g, {"name"});
  std::string t = metadata_text(g);
  if (t.empty()) return std::nullopt;
  return t;
}

std::optional<std::string> RunMetadata::version(std::string_view library) const {
  const std::string key(library);
  auto v = text_at(file_.software, {key.c_str()});
  if (!v && library == "driver") v = text_at(file_.software, {"cuda_driver"});
  return v;
}

std::optional<std::string> RunMetadata::timing() const {
  const json* t = lookup(file_.config, {"timing"});
  if (t == nullptr) return std::nullopt;
  if (t->is_object()) return text_at(*t, {"method"});
  std::string s = metadata_text(*t);
  if (s.empty()) return std::nullopt;
  return s;
}

std::optional<std::string> RunMetadata::iteration_policy() const {
  const json* it = lookup(file_.config, {"iters"});
  if (it == nullptr || it->is_null()) return std::nullopt;
  if (it->is_string() && it->get<std::string>() == "auto") return "auto";
  return "fixed";
}

std::optional<std::string> RunMetadata::label() const {
  if (file_.run.label.empty()) return std::nullopt;
  return file_.run.label;
}

std::string RunMetadata::text(std::string_view key) const {
  std::optional<std::string> v;
  if (key == "schema_version") return std::to_string(file_.schema_version);
  if (key == "ranks_per_node") {
    v = text_at(file_.system, {"ranks_per_node"});
  } else if (key == "timing") {
    v = timing();
  } else if (key == "iteration_policy") {
    v = iteration_policy();
  } else if (key == "instance_type") {
    v = instance_type();
  } else if (key == "nodes") {
    v = text_at(file_.system, {"nodes"});
  } else if (key == "efa_generation") {
    v = efa_generation();
  } else if (key == "fabric_path") {
    v = fabric_path();
  } else if (key == "provider") {
    v = provider();
  } else if (key == "link_gbps") {
    v = text_at(file_.fabric, {"link_gbps"});
  } else if (key == "backend") {
    v = backend();
  } else if (key == "label") {
    v = label();
  } else if (key == "registration") {
    // Every file before -R, and every import, registered nothing.
    v = text_at(file_.config, {"registration"}).value_or("none");
  } else if (key == "gpu") {
    v = gpu();
  } else if (key == "nccl" || key == "ofi_nccl" || key == "libfabric" || key == "mpi" || key == "cuda" ||
             key == "driver") {
    v = version(key);
  }
  return v.value_or("");
}

std::string row_groups(const ResultRow& row) {
  const auto g = row.extra.find("groups");
  if (g == row.extra.end() || !g->is_object()) return "none";
  const auto spec = g->find("spec");
  if (spec == g->end() || !spec->is_string() || spec->get<std::string>().empty()) return "none";
  return spec->get<std::string>();
}

std::string row_durable(const ResultRow& row) {
  const auto d = row.extra.find("durable");
  if (d == row.extra.end() || !d->is_boolean()) return "";
  return d->get<bool>() ? "true" : "false";
}

std::string row_cache(const ResultRow& row) {
  const auto c = row.extra.find("cache_drop");
  if (c == row.extra.end() || !c->is_string()) return "";
  return c->get<std::string>() == "warm" ? "warm" : "cold";
}

void record_fabric(ResultFile& file, const FabricRecord& f) {
  auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  file.fabric["path"] = f.path.empty() ? json(nullptr) : json(f.path);
  file.fabric["provider"] = opt(f.provider);
  file.fabric["generation"] = opt(f.generation);
  file.fabric["link_gbps"] = opt(f.link_gbps);
}

void record_topology(ResultFile& file, const TopologyRecord& t) {
  if (!file.system.is_object()) file.system = json::object();
  if (t.instance_type) file.system["instance_type"] = *t.instance_type;
  if (t.nodes) file.system["nodes"] = *t.nodes;
  if (t.ranks) file.system["ranks"] = *t.ranks;
  if (t.ranks_per_node) file.system["ranks_per_node"] = *t.ranks_per_node;
  if (t.hosts) file.system["hosts"] = *t.hosts;
}

std::optional<double> link_gbps_for_path(std::string_view path, double user_link_gbps,
                                         std::optional<double> profile_efa_gbps) {
  if (user_link_gbps > 0) return user_link_gbps;
  const bool over_efa = path == "efa" || path == "network" || path == "mixed";
  if (over_efa && profile_efa_gbps && *profile_efa_gbps > 0) return profile_efa_gbps;
  return std::nullopt;
}

}  // namespace ccbench
