#include "checkpoint/tier_rate.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "checkpoint/fsx_limits_yaml.hpp"
#include "checkpoint/plausibility.hpp"
#include "checkpoint/s3_limits_yaml.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"

namespace ccbench::checkpoint {
namespace {

double positive(const YAML::Node& n, const char* key, std::string_view source) {
  double v = -1;
  try {
    if (n && n.IsScalar()) v = n.as<double>();
  } catch (const YAML::Exception&) {
    v = -1;
  }
  if (!std::isfinite(v) || v <= 0) throw ParseError(fmt::format("{}: {}: expected a number > 0", source, key));
  return v;
}

// A decimal number > 0, all of `text`.
std::optional<double> number(const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || !std::isfinite(v) || v <= 0 || text.find_first_of("xXnN") != std::string::npos)
    return std::nullopt;
  return v;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

Rate scaled(const Rate& r, double by) { return {r.value_gbps * by, r.lo_gbps * by, r.hi_gbps * by}; }

// Every end of `r` bounded by `cap` (value and lo by its sustained rate, hi by its burst); `why`
// replaces `limited_by` when the cap binds the value.
void cap(Rate& r, std::string& limited_by, double sustained, double burst, const std::string& why) {
  if (sustained < r.value_gbps) limited_by = why;
  r.value_gbps = std::min(r.value_gbps, sustained);
  r.lo_gbps = std::min(r.lo_gbps, sustained);
  r.hi_gbps = std::min(r.hi_gbps, burst);
}

Rate per_trial(const std::vector<double>& gbps) {
  std::vector<double> v = gbps;
  std::sort(v.begin(), v.end());
  return {stats::median_sorted(v), v.front(), v.back()};
}

constexpr double kTiB = 1099511627776.0;
constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

const S3Limits& s3_limits() {
  static const S3Limits limits = [] {
    constexpr std::string_view source = "configs/storage/s3-limits.yaml";
    const YAML::Node root = YAML::Load(std::string(kS3LimitsYaml));
    return S3Limits{positive(root["put_per_s_per_prefix"], "put_per_s_per_prefix", source),
                    positive(root["get_per_s_per_prefix"], "get_per_s_per_prefix", source)};
  }();
  return limits;
}

const FsxCapacitySteps& fsx_capacity_steps() {
  static const FsxCapacitySteps steps = [] {
    constexpr std::string_view source = "configs/storage/fsx-lustre.yaml";
    const YAML::Node root = YAML::Load(std::string(kFsxLimitsYaml));
    return FsxCapacitySteps{positive(root["capacity_tib"]["smallest"], "capacity_tib.smallest", source),
                            positive(root["capacity_tib"]["step"], "capacity_tib.step", source)};
  }();
  return steps;
}

double fsx_round_capacity_tib(double tib) {
  const auto& s = fsx_capacity_steps();
  if (tib <= s.smallest_tib) return s.smallest_tib;
  // A relative slack so that 67.2 TiB computed as 67.20000001 stays 67.2.
  return std::ceil(tib / s.step_tib * (1 - 1e-12)) * s.step_tib;
}

TierSpec parse_tier(const std::string& text, const std::string& flag) {
  TierSpec t;
  t.text = text;
  const auto bad = [&](const std::string& part, const std::string& why) {
    return UsageError(
        fmt::format("{}: tier '{}': {} (fsx:DEPLOYMENT-PER_TIB[:CAPACITY_TIB], s3[:PREFIXES], "
                    "measured:FILE[,fsx:...|,s3])",
                    flag, part, why));
  };
  for (const auto& part : split(text, ',')) {
    const auto fields = split(part, ':');
    const std::string& kind = fields[0];
    if (kind == "fsx") {
      if (t.fsx_deployment || t.s3_prefixes > 0) throw bad(part, "one spec tier only");
      if (fields.size() < 2 || fields.size() > 3) throw bad(part, "expected fsx:DEPLOYMENT-PER_TIB[:CAPACITY_TIB]");
      const auto dash = fields[1].rfind('-');
      const auto per_tib = dash == std::string::npos ? std::nullopt : number(fields[1].substr(dash + 1));
      if (!per_tib) throw bad(part, "expected DEPLOYMENT-PER_TIB, e.g. PERSISTENT_2-250");
      t.fsx_deployment = fields[1].substr(0, dash);
      t.fsx_per_tib = *per_tib;
      // Checks the tier exists (the message names its flags); the capacity here is only a probe.
      try {
        (void)fsx_limit(fsx_table(), *t.fsx_deployment, t.fsx_per_tib, 1.0, Direction::write);
      } catch (const UsageError& e) {
        throw bad(part, e.what());
      }
      if (fields.size() == 3) {
        const auto cap = number(fields[2]);
        if (!cap) throw bad(part, fmt::format("capacity '{}' is not a number of TiB above 0", fields[2]));
        t.fsx_capacity_tib = *cap;
      }
    } else if (kind == "s3") {
      if (t.fsx_deployment || t.s3_prefixes > 0) throw bad(part, "one spec tier only");
      if (fields.size() > 2) throw bad(part, "expected s3[:PREFIXES]");
      t.s3_prefixes = 1;
      if (fields.size() == 2) {
        const auto n = number(fields[1]);
        if (!n || *n != std::floor(*n) || *n > 1e6) throw bad(part, "PREFIXES must be a whole number 1..1000000");
        t.s3_prefixes = static_cast<int>(*n);
      }
    } else if (kind == "measured") {
      const std::string file = part.substr(part.find(':') + 1);
      if (fields.size() < 2 || file.empty()) throw bad(part, "expected measured:FILE");
      t.measured_files.push_back(file);
    } else {
      throw bad(part, "unknown tier");
    }
  }
  if (!t.fsx_deployment && t.s3_prefixes == 0 && t.measured_files.empty()) throw bad(text, "no tier");
  return t;
}

namespace {

// The file's node count: a whole number 1..2^24 (ranks are at most 2^24, model/workload.cpp).
int file_nodes(const ResultFile& f) {
  if (!f.system.is_object() || !f.system.contains("nodes"))
    throw ParseError(fmt::format("{}: system.nodes: missing (not a ccbench checkpoint file?)", f.source));
  const auto& n = f.system["nodes"];
  constexpr std::int64_t kMaxNodes = 1 << 24;
  if (!n.is_number_integer() || (n.is_number_unsigned() && n.get<std::uint64_t>() > kMaxNodes) ||
      n.get<std::int64_t>() < 1 || n.get<std::int64_t>() > kMaxNodes)
    throw ParseError(fmt::format("{}: system.nodes: {} is not a node count (a whole number 1 to {})", f.source,
                                 n.dump(), kMaxNodes));
  return static_cast<int>(n.get<std::int64_t>());
}

// The row's rate from what it measured, bytes over its time (GB/s); its busbw_gbps must say the
// same (a checkpoint row's bus factor is 1): a file whose rate was edited is refused, not priced.
double row_gbps(const ResultFile& f, std::size_t index, const ResultRow& row) {
  const double us = row.time_us.median;
  const std::string where = fmt::format("{}: results[{}] ({} trial {})", f.source, index, row.op, row.trial);
  if (!(us > 0) || row.bytes == 0)
    throw ParseError(fmt::format("{}: bytes and time_us.median must be above 0 to give a rate", where));
  const double gbps = static_cast<double>(row.bytes) / (us * 1e3);
  if (!(std::abs(row.busbw_gbps - gbps) <= 1e-3 * gbps))
    throw ParseError(
        fmt::format("{}: busbw_gbps {:.6g} contradicts bytes / time_us.median = {:.6g} GB/s (a "
                    "checkpoint row's busbw is its bytes over its time; was the file edited?)",
                    where, row.busbw_gbps, gbps));
  return gbps;
}

}  // namespace

MeasuredRate measured_rate(const std::vector<ResultFile>& files) {
  std::vector<double> write, read, blocking;
  std::string nodes_seen;
  MeasuredRate m;
  for (const auto& f : files) {
    const int nodes = file_nodes(f);
    std::size_t flagged = 0;
    std::string first_flag;
    for (std::size_t i = 0; i < f.results.size(); ++i) {
      const ResultRow& row = f.results[i];
      if (row.op != "checkpoint_write" && row.op != "checkpoint_read") continue;
      // A --no-fsync write is not durable: its rate is the page cache's, not the tier's (compare
      // refuses such rows against durable ones; priced, it would claim a time to durable).
      const auto durable = row.extra.find("durable");
      if (row.op == "checkpoint_write" && durable != row.extra.end() && durable->is_boolean() && !durable->get<bool>())
        throw ParseError(
            fmt::format("{}: results[{}] (checkpoint_write trial {}): durable is false (written with "
                        "--no-fsync): not a time to durable; measure the tier with fsync",
                        f.source, i, row.trial));
      const auto p = row.extra.find("plausibility");
      if (p != row.extra.end() && p->is_string() && flagged++ == 0)
        first_flag = fmt::format("{} trial {}: {}", row.op, row.trial, p->get<std::string>());
      const double gbps = row_gbps(f, i, row) / nodes;
      if (row.op == "checkpoint_write") write.push_back(gbps);
      if (row.op == "checkpoint_read") read.push_back(gbps);
      const auto b = row.extra.find("blocking_us");
      if (row.op == "checkpoint_write" && b != row.extra.end() && b->is_number() && b->get<double>() > 0)
        blocking.push_back(static_cast<double>(row.bytes) / (b->get<double>() * 1e3) / nodes);
    }
    if (flagged > 0) m.warnings.push_back(fmt::format("{}: {} row(s) flagged, e.g. {}", f.source, flagged, first_flag));
    nodes_seen += fmt::format("{}{} nodes ({})", nodes_seen.empty() ? "" : ", ", nodes, f.source);
  }
  if (write.empty()) {
    throw ParseError(fmt::format("{}: no checkpoint_write row (a result file of `ccbench checkpoint`)",
                                 files.empty() ? std::string("measured") : files.front().source));
  }
  m.write_per_node = per_trial(write);
  if (!read.empty()) m.read_per_node = per_trial(read);
  if (!blocking.empty()) m.blocking_per_node = per_trial(blocking);
  m.trials = static_cast<int>(write.size());
  m.source = fmt::format("{} trials measured on {}", write.size(), nodes_seen);
  return m;
}

TierRates tier_rates(const TierQuery& q) {
  TierRates out;
  const double nodes = q.writer_nodes;
  const double bytes = static_cast<double>(q.checkpoint_bytes);
  out.write = {kInf, kInf, kInf};
  out.read = {kInf, kInf, kInf};
  std::string read_from;
  std::optional<MeasuredRate> measured;
  if (!q.tier.measured_files.empty()) {
    std::vector<ResultFile> files;
    for (const auto& f : q.tier.measured_files) files.push_back(load_result_file(f));
    measured = measured_rate(files);
    out.warnings = measured->warnings;
    out.write = scaled(measured->write_per_node, nodes);
    out.limited_by = fmt::format("measured: {:.3g} GB/s a node x {} nodes ({})", measured->write_per_node.value_gbps,
                                 q.writer_nodes, measured->source);
    if (measured->blocking_per_node) out.blocking = scaled(*measured->blocking_per_node, nodes);
    if (measured->read_per_node) {
      out.read = scaled(*measured->read_per_node, nodes);
      read_from = "measured reads";
    }
  }
  if (q.tier.fsx_deployment) {
    const auto& dep = *q.tier.fsx_deployment;
    double tib = q.tier.fsx_capacity_tib;
    if (tib <= 0) {
      if (!(q.write_within_s > 0)) {
        throw UsageError(fmt::format("--write-within: needed to size '{}' (or give its capacity, fsx:{}-{}:TIB)",
                                     q.tier.text, dep, q.tier.fsx_per_tib));
      }
      const double per_tib_gbps = fsx_limit(fsx_table(), dep, q.tier.fsx_per_tib, 1.0, Direction::write).baseline_gbps;
      const double for_rate = bytes / (q.write_within_s * per_tib_gbps * 1e9);
      const double for_space = q.keep * bytes / kTiB;
      tib = fsx_round_capacity_tib(std::max(for_rate, for_space));
    }
    out.capacity_tib = tib;
    const auto w = fsx_limit(fsx_table(), dep, q.tier.fsx_per_tib, tib, Direction::write);
    const auto r = fsx_limit(fsx_table(), dep, q.tier.fsx_per_tib, tib, Direction::read);
    if (!measured) {
      out.write = {w.baseline_gbps, w.baseline_gbps, w.ceiling_gbps};
      out.limited_by = w.source;
    } else {
      cap(out.write, out.limited_by, w.baseline_gbps, w.ceiling_gbps, w.source);
    }
    if (read_from.empty()) {
      out.read = {r.baseline_gbps, r.baseline_gbps, r.ceiling_gbps};
      read_from = r.source;
    } else {
      std::string unused;
      cap(out.read, unused, r.baseline_gbps, r.ceiling_gbps, r.source);
    }
  }
  if (q.tier.s3_prefixes > 0) {
    const auto& s3 = s3_limits();
    const double part = static_cast<double>(q.s3_part_bytes);
    const double put = s3.put_per_s_per_prefix * q.tier.s3_prefixes * part / 1e9;
    const double get = s3.get_per_s_per_prefix * q.tier.s3_prefixes * part / 1e9;
    const std::string why = fmt::format("S3: {} PUT/s x {} prefixes x {} MiB parts (configs/storage/s3-limits.yaml)",
                                        s3.put_per_s_per_prefix, q.tier.s3_prefixes, q.s3_part_bytes >> 20);
    if (!measured) out.limited_by = why;
    cap(out.write, out.limited_by, put, put, why);
    std::string unused;
    cap(out.read, unused, get, get, "S3 GET rate");
    if (read_from.empty()) read_from = fmt::format("S3: {} GET/s a prefix", s3.get_per_s_per_prefix);
  }
  const double net = q.node_network_gbps * nodes;
  const std::string net_why = fmt::format("the nodes' network: {:.4g} GB/s x {} nodes (configs/instances/aws.yaml)",
                                          q.node_network_gbps, q.writer_nodes);
  cap(out.write, out.limited_by, net, net, net_why);
  std::string unused;
  cap(out.read, unused, net, net, net_why);
  if (read_from.empty()) {
    // A measured file without reads and no spec: the restart reads at the write's rate.
    out.read = out.write;
    read_from = "the write rate (no read measured)";
  }
  out.read_from = read_from;
  return out;
}

}  // namespace ccbench::checkpoint
