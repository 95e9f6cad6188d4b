#include "checkpoint/plausibility.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

#include "checkpoint/fsx_limits_yaml.hpp"
#include "core/error.hpp"

namespace ccbench::checkpoint {
namespace {

double number(const YAML::Node& row, const char* key, std::string_view where) {
  const YAML::Node v = row[key];
  double out = -1;
  if (v && v.IsScalar()) {
    try {
      out = v.as<double>();
    } catch (const YAML::Exception&) {
      out = -1;
    }
  }
  if (!std::isfinite(out) || out < 0) throw ParseError(fmt::format("{}.{}: expected a number >= 0", where, key));
  return out;
}

// MB/s per TiB x TiB -> GB/s (10^9 bytes a second).
double gbps(double mbps_per_tib, double tib) { return mbps_per_tib * tib / 1000.0; }

}  // namespace

std::vector<FsxTierRow> parse_fsx_table(std::string_view yaml_text, std::string_view source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    throw ParseError(fmt::format("{}:{}: malformed YAML ({})", source, e.mark.line + 1, e.msg));
  }
  const YAML::Node tiers = root["tiers"];
  if (!tiers || !tiers.IsSequence() || tiers.size() == 0) throw ParseError(fmt::format("{}: no 'tiers' list", source));
  std::vector<FsxTierRow> out;
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    const std::string where = fmt::format("{}: tiers[{}]", source, i);
    const YAML::Node row = tiers[i];
    if (!row.IsMap() || !row["deployment"] || !row["deployment"].IsScalar()) {
      throw ParseError(where + ".deployment: missing");
    }
    FsxTierRow r;
    r.deployment = row["deployment"].Scalar();
    r.per_tib = number(row, "per_tib", where);
    r.network_baseline = number(row, "network_baseline", where);
    r.network_burst = number(row, "network_burst", where);
    r.disk_read = number(row, "disk_read", where);
    r.disk_write = number(row, "disk_write", where);
    r.disk_burst = number(row, "disk_burst", where);
    out.push_back(r);
  }
  return out;
}

const std::vector<FsxTierRow>& fsx_table() {
  static const std::vector<FsxTierRow> table = parse_fsx_table(kFsxLimitsYaml, "configs/storage/fsx-lustre.yaml");
  return table;
}

ThroughputLimit fsx_limit(const std::vector<FsxTierRow>& table, std::string_view deployment, double per_tib,
                          double capacity_tib, Direction direction) {
  std::vector<std::string> known;
  for (const auto& r : table) {
    if (r.deployment != deployment) continue;
    known.push_back(fmt::format("{}", r.per_tib));
    if (r.per_tib != per_tib) continue;
    const double disk = direction == Direction::write ? r.disk_write : r.disk_read;
    const double net_burst = std::max(r.network_burst, r.network_baseline);
    const double disk_burst = std::max(r.disk_burst, disk);
    const double base = std::min(r.network_baseline, disk);
    const double burst = std::min(net_burst, disk_burst);
    ThroughputLimit limit;
    limit.baseline_gbps = gbps(base, capacity_tib);
    limit.ceiling_gbps = gbps(burst, capacity_tib);
    limit.source = fmt::format(
        "FSx {}-{} x {} TiB, {}: min(network {}, disk {}) = {} MB/s/TiB baseline, {} MB/s/TiB with burst "
        "(configs/storage/fsx-lustre.yaml)",
        deployment, per_tib, capacity_tib, direction == Direction::write ? "write" : "read", r.network_baseline, disk,
        base, burst);
    return limit;
  }
  if (known.empty())
    throw UsageError(fmt::format("--fsx-deployment: unknown deployment '{}' (SCRATCH_2, PERSISTENT_2)", deployment));
  throw UsageError(fmt::format("--fsx-throughput-per-tib: {} is not a tier of {} (one of {})", per_tib, deployment,
                               fmt::join(known, ", ")));
}

std::optional<std::string> plausibility_warning(double measured_gbps, const std::optional<ThroughputLimit>& tier,
                                                double memory_gbps) {
  if (tier && tier->ceiling_gbps > 0 && measured_gbps > kPlausibilityMargin * tier->ceiling_gbps) {
    return fmt::format("not durable? {:.3g} GB/s is above what the stated tier can carry ({:.3g} GB/s: {})",
                       measured_gbps, tier->ceiling_gbps, tier->source);
  }
  if (memory_gbps > 0 && measured_gbps > kPlausibilityMargin * memory_gbps) {
    return fmt::format("not durable? {:.3g} GB/s is above the hosts' memory bandwidth ({:.3g} GB/s measured)",
                       measured_gbps, memory_gbps);
  }
  return std::nullopt;
}

}  // namespace ccbench::checkpoint
