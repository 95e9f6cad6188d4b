// What a stated storage tier can carry, and the warning when a measurement is above it
// ("not durable?": a page cache or a write that never reached the disk). FSx for Lustre's numbers
// come from configs/storage/fsx-lustre.yaml (compiled in); a local tier states its own ceiling
// (--tier-gbps); every tier is also bounded by the hosts' memory bandwidth. docs/checkpoint.md,
// "Plausibility".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::checkpoint {

enum class Direction { write, read };

struct FsxTierRow {
  std::string deployment;  // SCRATCH_2, PERSISTENT_2
  double per_tib = 0;      // MB/s per TiB: the provisioned throughput tier
  double network_baseline = 0, network_burst = 0;
  double disk_read = 0, disk_write = 0, disk_burst = 0;
};

// Parses the table; throws ParseError "SOURCE: tiers[i].key: ..." for a missing or bad value.
std::vector<FsxTierRow> parse_fsx_table(std::string_view yaml_text, std::string_view source);
// The compiled-in table (configs/storage/fsx-lustre.yaml).
const std::vector<FsxTierRow>& fsx_table();

struct ThroughputLimit {
  double baseline_gbps = 0;  // sustained
  double ceiling_gbps = 0;   // with burst credits (= baseline when none are published)
  std::string source;        // "FSx PERSISTENT_2-250 x 9.6 TiB: min(network 640, disk 250) MB/s/TiB ..."
};

// The file system's limit for `direction`: min(network, disk) per TiB x capacity, baseline and with
// burst. Throws UsageError naming --fsx-throughput-per-tib when the table has no such tier.
ThroughputLimit fsx_limit(const std::vector<FsxTierRow>& table, std::string_view deployment, double per_tib,
                          double capacity_tib, Direction direction);

// A measurement counts as above a limit only beyond this factor: a throttle or a published number
// is not exact to the percent (the emulated tiers measure 0.98-1.01 of their limits).
inline constexpr double kPlausibilityMargin = 1.10;

// The warning for a measured aggregate throughput, or nullopt when it is plausible: above the
// tier's ceiling (when stated) or above `memory_gbps` (the hosts' summed memory-copy bandwidth, 0 =
// unknown). E.g. "not durable? 1.93 GB/s is above what the stated tier can carry (0.052 GB/s: ...)".
std::optional<std::string> plausibility_warning(double measured_gbps, const std::optional<ThroughputLimit>& tier,
                                                double memory_gbps);

}  // namespace ccbench::checkpoint
