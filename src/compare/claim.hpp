// Claims to test (configs/claims/*.yaml or the equivalent flags) and the regression gate's settings.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::compare {

enum class Metric { busbw, time };
// step: the step row of two `ccbench replay` files alone (compare/step.hpp).
enum class Statistic { geomean, max, step };
enum class Normalize { none, link_bandwidth };

std::string_view name(Metric m);
std::string_view name(Statistic s);
std::string_view name(Normalize n);
// Throw UsageError naming `what` for an unknown spelling.
Metric parse_metric(std::string_view text, std::string_view what);
Statistic parse_statistic(std::string_view text, std::string_view what);
Normalize parse_normalize(std::string_view text, std::string_view what);

// Requirements on one side's metadata: key (see metadata.hpp, e.g. efa_generation, instance_type)
// -> accepted values.
using Requirements = std::map<std::string, std::vector<std::string>>;

struct Claim {
  std::string statement;
  std::string source;
  std::string file;  // where it came from ("" for flags)
  Metric metric = Metric::busbw;
  // The claimed speedup as ratio - 1 (ratio = candidate/baseline busbw = baseline/candidate time).
  double expected_speedup = 0;
  // Set when the claim was written as a latency reduction r: expected_speedup = 1/(1-r) - 1.
  std::optional<double> expected_time_reduction;
  double tolerance = 0.05;  // on the speedup: the claim holds for ratios in 1+expected +- tolerance
  Statistic statistic = Statistic::geomean;
  std::vector<std::string> ops;
  std::optional<std::uint64_t> min_bytes;
  std::optional<std::uint64_t> max_bytes;
  Normalize normalize = Normalize::none;
  Requirements baseline;
  Requirements candidate;

  double expected_ratio() const { return 1.0 + expected_speedup; }
  double lower() const { return 1.0 + expected_speedup - tolerance; }
  double upper() const { return 1.0 + expected_speedup + tolerance; }
};

// Reads a claim YAML file. Unknown keys, wrong types and bad values throw ParseError naming the file
// and line.
Claim load_claim_file(const std::filesystem::path& path);

struct Gate {
  double threshold = 0.05;  // a slowdown must exceed this fraction (time_cand/time_base - 1) to fail
  double alpha = 0.05;      // family-wise error rate across sizes (Holm-Bonferroni)
};

}  // namespace ccbench::compare
