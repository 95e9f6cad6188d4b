#include "compare/claim.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

#include "core/comma_list.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/numbers.hpp"
#include "core/run_metadata.hpp"
#include "core/yaml_checks.hpp"
#include "core/sizes.hpp"
#include "core/types.hpp"

namespace ccbench::compare {

std::string_view name(Metric m) { return m == Metric::busbw ? "busbw" : "time"; }
std::string_view name(Statistic s) {
  return s == Statistic::geomean ? "geomean" : s == Statistic::max ? "max" : "step";
}
std::string_view name(Normalize n) { return n == Normalize::none ? "none" : "link_bandwidth"; }

Metric parse_metric(std::string_view text, std::string_view what) {
  if (text == "busbw") return Metric::busbw;
  if (text == "time" || text == "latency") return Metric::time;
  throw UsageError(fmt::format("{}: unknown metric '{}' (busbw or time)", what, text));
}

Statistic parse_statistic(std::string_view text, std::string_view what) {
  if (text == "geomean") return Statistic::geomean;
  if (text == "max") return Statistic::max;
  if (text == "step") return Statistic::step;
  throw UsageError(fmt::format("{}: unknown statistic '{}' (geomean, max or step)", what, text));
}

Normalize parse_normalize(std::string_view text, std::string_view what) {
  if (text == "none") return Normalize::none;
  if (text == "link_bandwidth") return Normalize::link_bandwidth;
  throw UsageError(fmt::format("{}: unknown normalisation '{}' (none or link_bandwidth)", what, text));
}

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const YAML::Node& node, const std::string& what) {
  const auto mark = node.Mark();
  if (mark.line >= 0) throw ParseError(fmt::format("{}:{}: {}", path.string(), mark.line + 1, what));
  throw ParseError(fmt::format("{}: {}", path.string(), what));
}

std::string scalar(const std::filesystem::path& path, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) fail(path, node, fmt::format("{}: must be a single value", key));
  return node.as<std::string>();
}

double fraction(const std::filesystem::path& path, const YAML::Node& node, const std::string& key) {
  try {
    return parse_fraction_or_ratio(scalar(path, node, key), key);
  } catch (const UsageError& e) {
    fail(path, node, e.what());
  }
}

std::uint64_t bytes(const std::filesystem::path& path, const YAML::Node& node, const std::string& key) {
  try {
    return parse_bytes(scalar(path, node, key));
  } catch (const UsageError& e) {
    fail(path, node, fmt::format("{}: {}", key, e.what()));
  }
}

std::vector<std::string> string_list(const std::filesystem::path& path, const YAML::Node& node,
                                     const std::string& key) {
  std::vector<std::string> out;
  if (node.IsSequence()) {
    for (const auto& item : node) out.push_back(scalar(path, item, key));
  } else {
    const std::string s = scalar(path, node, key);
    for (const std::string_view piece : split_commas(s))
      if (!piece.empty()) out.push_back(std::string(piece));
  }
  return out;
}

Requirements requirements(const std::filesystem::path& path, const YAML::Node& node, const std::string& key) {
  if (!node.IsMap()) fail(path, node, fmt::format("{}: must be a map of requirements", key));
  Requirements out;
  for (const auto& item : node) {
    const auto k = scalar(path, item.first, key + " key");
    const MetadataKey* known = find_metadata_key(k);
    if (known == nullptr || (known->roles & meta_role::claim_requirement) == 0) {
      fail(path, item.first,
           fmt::format("{}: unknown requirement '{}' (known: {})", key, k,
                       fmt::join(metadata_key_names(meta_role::claim_requirement), ", ")));
    }
    out[k] = string_list(path, item.second, key + "." + k);
  }
  return out;
}

}  // namespace

Claim load_claim_file(const std::filesystem::path& path) {
  // read_input_file refuses a FIFO (it would block), a folder, a device, a symlink loop.
  const std::string text = read_input_file(path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ParseError(
        fmt::format("{}:{}: malformed YAML ({})", path.string(), e.mark.line + 1, yaml_checks::describe(e)));
  }
  yaml_checks::check_document(path.string(), text, root);
  if (!root.IsMap()) throw ParseError(fmt::format("{}: a claim file must be a YAML map", path.string()));
  Claim c;
  c.file = path.string();
  bool have_expected = false;
  try {
    for (const auto& item : root) {
      const auto key = scalar(path, item.first, "a key");
      const YAML::Node& v = item.second;
      if (key == "statement") {
        c.statement = scalar(path, v, key);
      } else if (key == "source") {
        c.source = scalar(path, v, key);
      } else if (key == "metric") {
        c.metric = parse_metric(scalar(path, v, key), "metric");
      } else if (key == "expected_speedup") {
        c.expected_speedup = fraction(path, v, key);
        have_expected = true;
      } else if (key == "expected_time_reduction") {
        const double r = fraction(path, v, key);
        if (!(r < 1.0)) fail(path, v, "expected_time_reduction: must be below 100%");
        c.expected_time_reduction = r;
      } else if (key == "tolerance") {
        c.tolerance = fraction(path, v, key);
        if (!(c.tolerance >= 0)) fail(path, v, "tolerance: must not be negative");
      } else if (key == "statistic") {
        c.statistic = parse_statistic(scalar(path, v, key), "statistic");
      } else if (key == "ops") {
        c.ops = string_list(path, v, key);
        for (const auto& op : c.ops) {
          if (!parse_op(op)) fail(path, v, fmt::format("ops: unknown op '{}'", op));
        }
      } else if (key == "min_bytes") {
        c.min_bytes = bytes(path, v, key);
      } else if (key == "max_bytes") {
        c.max_bytes = bytes(path, v, key);
      } else if (key == "normalize") {
        c.normalize = parse_normalize(scalar(path, v, key), "normalize");
      } else if (key == "baseline") {
        c.baseline = requirements(path, v, key);
      } else if (key == "candidate") {
        c.candidate = requirements(path, v, key);
      } else {
        fail(path, item.first,
             fmt::format("unknown key '{}' (known: statement, source, metric, expected_speedup, "
                         "expected_time_reduction, tolerance, statistic, ops, min_bytes, max_bytes, normalize, "
                         "baseline, candidate)",
                         key));
      }
    }
  } catch (const UsageError& e) {
    throw ParseError(fmt::format("{}: {}", path.string(), e.what()));
  } catch (const YAML::Exception& e) {
    throw ParseError(fmt::format("{}:{}: {}", path.string(), e.mark.line + 1, e.msg));
  }
  if (c.expected_time_reduction) {
    const double from_reduction = 1.0 / (1.0 - *c.expected_time_reduction) - 1.0;
    if (have_expected && std::abs(from_reduction - c.expected_speedup) > 0.005) {
      throw ParseError(fmt::format(
          "{}: expected_speedup {:.4f} contradicts expected_time_reduction {:.4f} (which means a speedup of {:.4f})",
          path.string(), c.expected_speedup, *c.expected_time_reduction, from_reduction));
    }
    if (!have_expected) c.expected_speedup = from_reduction;
    have_expected = true;
  }
  if (!have_expected) {
    throw ParseError(fmt::format("{}: missing expected_speedup (or expected_time_reduction)", path.string()));
  }
  if (c.min_bytes && c.max_bytes && *c.min_bytes > *c.max_bytes) {
    throw ParseError(fmt::format("{}: min_bytes is larger than max_bytes", path.string()));
  }
  return c;
}

}  // namespace ccbench::compare
