// The one owner of run metadata: typed accessors over a result file's metadata sections, the one
// table of metadata keys (where each lives and what uses it: compare's must-match check, claim
// requirements, the differences compare lists, report columns, Prometheus labels), and the one
// writer of the fabric section and of the job's shape in the system section (run, fabric and import
// record them through record_fabric and record_topology). The
// fields and their meaning are in docs/result-format.md.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace ccbench {

namespace meta_role {
inline constexpr unsigned must_match = 1;          // compare: not_comparable when the sides differ
inline constexpr unsigned expected_to_differ = 2;  // compare: listed side by side when the sides differ
inline constexpr unsigned claim_requirement = 4;   // a claim may require values of it (baseline:/candidate:)
inline constexpr unsigned report_column = 8;       // report's run tables (markdown, HTML, CSV) show it
inline constexpr unsigned prometheus_label = 16;   // a label of ccbench_run_info
inline constexpr unsigned per_row = 32;            // read from the rows (results[]), not a metadata section
}  // namespace meta_role

struct MetadataKey {
  std::string_view name;      // spelling in --allow-mismatch, claim requirements, compare's differences
  std::string_view location;  // where a result file keeps it, e.g. "fabric.link_gbps"
  unsigned roles = 0;
  std::string_view prometheus;  // label name when roles has prometheus_label
};

// In the order compare lists differences and Prometheus writes labels.
std::span<const MetadataKey> metadata_keys();
const MetadataKey* find_metadata_key(std::string_view name);
std::vector<std::string_view> metadata_key_names(unsigned role);

class RunMetadata {
 public:
  explicit RunMetadata(const ResultFile& file) : file_(file) {}

  std::optional<std::string> fabric_path() const;
  std::optional<std::string> provider() const;
  std::optional<std::string> efa_generation() const;
  std::optional<double> link_gbps() const;  // positive and finite only
  std::optional<std::string> instance_type() const;
  std::optional<std::int64_t> nodes() const;
  std::optional<std::int64_t> ranks() const;  // system.ranks: the run's rank count
  std::optional<std::int64_t> ranks_per_node() const;
  std::optional<std::string> backend() const;
  std::optional<std::string> gpu() const;  // the first host's first GPU
  // mpi, nccl, cuda, libfabric, ofi_nccl, driver (software.driver, else software.cuda_driver).
  std::optional<std::string> version(std::string_view library) const;
  std::optional<std::string> timing() const;            // config.timing (or its "method")
  std::optional<std::string> iteration_policy() const;  // "auto" or "fixed"
  std::optional<std::string> label() const;

  // The value of a file-level key of the table as text, "" when the file does not say (per-row
  // keys give "" too: their values come from the rows).
  std::string text(std::string_view key) const;

 private:
  const ResultFile& file_;
};

// Text of a metadata JSON value: strings as they are, integral numbers without a decimal point.
std::string metadata_text(const nlohmann::json& value);

// The --groups SPEC a row was measured with ("mod:8"), "none" for a row of one communicator of every
// rank (no `groups` field: every file before groups, imports). The per-row must-match key `groups`.
std::string row_groups(const ResultRow& row);

// `ccbench checkpoint` rows: "true"/"false" (durable: fsync'd or --no-fsync), and "cold"/"warm" (a
// read after a cache drop, or one where none worked); "" for rows that do not say (every other op).
// The per-row must-match keys `durable` and `cache`.
std::string row_durable(const ResultRow& row);
std::string row_cache(const ResultRow& row);

// What the fabric section of a new result file says.
struct FabricRecord {
  std::string path;                       // shm, nvlink, efa, tcp, network, ...; "" = unknown
  std::optional<std::string> provider;    // libfabric provider
  std::optional<std::string> generation;  // EFA generation
  std::optional<double> link_gbps;        // per-node link rate, Gbit/s
};
// Writes file.fabric = {path, provider, generation, link_gbps} (null where unknown).
void record_fabric(ResultFile& file, const FabricRecord& fabric);

// What the system section of a new result file says about the job's shape.
struct TopologyRecord {
  std::optional<std::int64_t> ranks{};
  std::optional<std::int64_t> nodes{};
  std::optional<std::int64_t> ranks_per_node{};
  std::optional<std::string> instance_type{};
  std::optional<nlohmann::json> hosts{};  // [{hostname, ...}] in host order
};
// Writes system.{instance_type, nodes, ranks, ranks_per_node, hosts}: the ones the record knows
// (an importer records the user's --nodes first, then what the log says); the section's other keys (instance_profile,
// host load) are kept.
void record_topology(ResultFile& file, const TopologyRecord& topology);

// The link rate a run records: the user's (--link-gbps, when > 0), else the instance profile's EFA
// rate only when the traffic goes over EFA (path efa, or network between nodes of an EFA instance);
// none on shm, nvlink, tcp or any other path.
std::optional<double> link_gbps_for_path(std::string_view path, double user_link_gbps,
                                         std::optional<double> profile_efa_gbps);

}  // namespace ccbench
