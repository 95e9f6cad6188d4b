// `ccbench model checkpoint --workload FILE --nodes N --node-mtbf-hours H --config PROFILE@TIER
//  [--config PROFILE@TIER] [--write-within S] [--keep K] [--restart-s R] [--async-gbps-per-node G]
//  [--part-size SIZE] [--format text|json]`: what checkpoints cost a training job (docs/model.md,
// "What checkpoints cost a job"). The pricing of a configuration is checkpoint/config_price (over
// model/checkpoint_cost and checkpoint/tier_rate); this file reads flags and prints.
//
// Exit codes: 0 printed; 2 a bad flag (the message names it), a workload or result file that does
// not parse (named with its key), an unknown profile or tier.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "checkpoint/config_price.hpp"
#include "cli/model_command.hpp"
#include "cli/number_flags.hpp"
#include "cli/parse_flags.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"
#include "model/workload.hpp"
#include "sweep/flag_suggestion.hpp"
#include "system/instance_profile.hpp"

namespace ccbench::cli {
namespace {

using nlohmann::json;

// Upper bounds of the number flags: far beyond any real job (114,000 years, 31 years, 1 PB/s a node)
// and far enough below DBL_MAX that the formulas stay finite.
constexpr double kMaxHours = 1e9;
constexpr double kMaxSeconds = 1e9;
constexpr double kMaxGbps = 1e6;

using checkpoint::Band;
using Inputs = checkpoint::JobInputs;
using Config = checkpoint::PricedConfig;

system::InstanceProfile find_profile(const std::string& name) {
  for (const auto& candidate : {name, name + ".48xlarge"}) {
    if (auto p = system::find_instance_profile(candidate)) return *p;
  }
  throw UsageError(
      fmt::format("--config: unknown instance profile '{}' (configs/instances/aws.yaml: p5en.48xlarge, "
                  "p6-b300.48xlarge, ...)",
                  name));
}

// PROFILE@TIER priced (checkpoint/config_price); the profile from configs/instances.
Config price(const Inputs& in, const std::string& text) {
  const auto at = text.find('@');
  if (at == std::string::npos || at == 0 || at + 1 == text.size())
    throw UsageError(fmt::format("--config {}: expected PROFILE@TIER, e.g. p5en@fsx:PERSISTENT_2-250", text));
  const system::InstanceProfile profile = find_profile(text.substr(0, at));
  return checkpoint::price_config(in, text, text.substr(at + 1), {profile.instance_type, profile.efa_gbps});
}

json band_fields(json j, const std::string& name, const Band& b) {
  j[name + "_s"] = b.value;
  j[name + "_lo_s"] = b.lo;
  j[name + "_hi_s"] = b.hi;
  return j;
}

// Only an FSx tier has a capacity to provision; an S3 or measured tier has none (not 0 TiB).
std::string capacity_text(const Config& c) {
  return c.rates.capacity_tib > 0 ? fmt::format("{:.4g} TiB", c.rates.capacity_tib) : "none (not an FSx tier)";
}

json capacity_json(const Config& c) { return c.rates.capacity_tib > 0 ? json(c.rates.capacity_tib) : json(nullptr); }

json to_json(const Config& c) {
  json j = {{"config", c.text},
            {"profile", c.profile},
            {"tier", c.tier},
            {"checkpoint_bytes", c.checkpoint_bytes},
            {"writer_nodes", c.writer_nodes},
            {"capacity_tib", capacity_json(c)},
            {"write_gbps", c.rates.write.value_gbps},
            {"write_lo_gbps", c.rates.write.lo_gbps},
            {"write_hi_gbps", c.rates.write.hi_gbps},
            {"limited_by", c.rates.limited_by},
            {"blocking_gbps", c.rates.blocking ? json(c.rates.blocking->value_gbps) : json(nullptr)},
            {"read_gbps", c.rates.read.value_gbps},
            {"read_from", c.rates.read_from},
            {"job_mtbf_s", c.job_mtbf_s},
            {"warnings", c.rates.warnings}};
  j = band_fields(j, "blocking", c.blocking_s);
  j = band_fields(j, "time_to_durable", c.durable_s);
  j = band_fields(j, "restart", c.restart_s);
  j = band_fields(j, "young_interval", c.young_s);
  j = band_fields(j, "daly_interval", c.daly_s);
  j["goodput"] = c.goodput.value;
  j["goodput_lo"] = c.goodput.lo;
  j["goodput_hi"] = c.goodput.hi;
  j["lost"] = {{"checkpoints", c.cost.checkpoint_fraction},
               {"restarts", c.cost.restart_fraction},
               {"rework", c.cost.rework_fraction}};
  return j;
}

std::string seconds(double s) {
  if (s >= 3600) return fmt::format("{:.3g} h", s / 3600);
  if (s >= 60) return fmt::format("{:.3g} min", s / 60);
  return fmt::format("{:.3g} s", s);
}

std::string band_text(const Band& b) {
  if (b.lo == b.hi) return seconds(b.value);
  return fmt::format("{} [{}, {}]", seconds(b.value), seconds(b.lo), seconds(b.hi));
}

std::string pct(double f) { return fmt::format("{:.2f}%", 100 * f); }

void print_text(const Inputs& in, const std::vector<Config>& configs) {
  const double m = configs.front().job_mtbf_s;
  const auto bytes = configs.front().checkpoint_bytes;
  std::printf("%s on %d nodes: checkpoint %.4g GiB (%llu bytes); node MTBF %.4g h / %d nodes = job MTBF %s\n",
              in.workload.name.c_str(), in.nodes, static_cast<double>(bytes) / (1ULL << 30),
              static_cast<unsigned long long>(bytes), in.node_mtbf_hours, in.nodes, seconds(m).c_str());
  for (const auto& c : configs) {
    std::printf("\n%s @ %s%s\n", c.profile.c_str(), c.tier.c_str(),
                c.rates.capacity_tib > 0 ? fmt::format(" ({:.4g} TiB)", c.rates.capacity_tib).c_str() : "");
    std::printf("  write            %.3g GB/s [%.3g, %.3g] over %d writing nodes; limited by %s\n",
                c.rates.write.value_gbps, c.rates.write.lo_gbps, c.rates.write.hi_gbps, c.writer_nodes,
                c.rates.limited_by.c_str());
    std::printf("  blocking         %s%s\n", band_text(c.blocking_s).c_str(),
                c.rates.blocking
                    ? fmt::format(" (the local tier, measured: {:.3g} GB/s)", c.rates.blocking->value_gbps).c_str()
                    : "");
    std::printf("  time to durable  %s\n", band_text(c.durable_s).c_str());
    std::printf("  restart          %s (read at %.3g GB/s: %s)\n", band_text(c.restart_s).c_str(),
                c.rates.read.value_gbps, c.rates.read_from.c_str());
    std::printf("  interval         Young %s, Daly %s\n", band_text(c.young_s).c_str(), band_text(c.daly_s).c_str());
    std::printf("  goodput          %s [%s, %s] at Daly's interval; lost: checkpoints %s, restarts %s, rework %s\n",
                pct(c.goodput.value).c_str(), pct(c.goodput.lo).c_str(), pct(c.goodput.hi).c_str(),
                pct(c.cost.checkpoint_fraction).c_str(), pct(c.cost.restart_fraction).c_str(),
                pct(c.cost.rework_fraction).c_str());
  }
  if (configs.size() == 2) {
    const auto& a = configs[0];
    const auto& b = configs[1];
    std::printf(
        "\ndelta (second - first): goodput %+.2f points [%+.2f, %+.2f], blocking %+.3g s, time to durable "
        "%+.3g s, capacity %s -> %s\n",
        100 * (b.goodput.value - a.goodput.value), 100 * (b.goodput.lo - a.goodput.hi),
        100 * (b.goodput.hi - a.goodput.lo), b.blocking_s.value - a.blocking_s.value,
        b.durable_s.value - a.durable_s.value, capacity_text(a).c_str(), capacity_text(b).c_str());
  }
}

json delta_json(const Config& a, const Config& b) {
  return {{"goodput", b.goodput.value - a.goodput.value},
          {"goodput_lo", b.goodput.lo - a.goodput.hi},
          {"goodput_hi", b.goodput.hi - a.goodput.lo},
          {"blocking_s", b.blocking_s.value - a.blocking_s.value},
          {"time_to_durable_s", b.durable_s.value - a.durable_s.value},
          {"capacity_tib", {capacity_json(a), capacity_json(b)}}};
}

int checkpoint_main(int argc, char** argv) {
  CLI::App app{
      "What checkpoints cost a training job: blocking time, time to durable, Young's and Daly's "
      "intervals and goodput at a failure rate, on one or two configurations (instance profile and "
      "storage tier).",
      "ccbench model checkpoint"};
  Inputs in;
  std::string workload_file, part = "64M", format = "text";
  std::vector<std::string> config_texts;
  app.add_option("--workload", workload_file, "workload file (configs/workloads/*.yaml): the checkpoint's bytes")
      ->required();
  app.add_option("--nodes,-N", in.nodes, "nodes the job runs on")->required()->check(CLI::Range(1, 1 << 20));
  app.add_option("--node-mtbf-hours", in.node_mtbf_hours,
                 "mean time between unexpected interruptions of one node, hours (Llama 3: about 6300)")
      ->required()
      ->check(number_in(0, kMaxHours, false));
  app.add_option("--config", config_texts,
                 "PROFILE@TIER, once or twice (the second gives the delta); TIER: fsx:PERSISTENT_2-250[:TIB], "
                 "s3[:PREFIXES], measured:FILE[,fsx:...]")
      ->required()
      ->expected(1, 2);
  app.add_option("--write-within", in.write_within_s,
                 "seconds: sizes an FSx tier given no capacity so one checkpoint writes within this at baseline")
      ->check(number_in(0, kMaxSeconds, false));
  app.add_option("--keep", in.keep, "checkpoints the file system holds (its capacity covers them; default 2)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--restart-s", in.restart_s,
                 "seconds a restart takes besides reading the checkpoint (rescheduling, start-up; default 0)")
      ->check(number_in(0, kMaxSeconds));
  app.add_option("--async-gbps-per-node", in.async_gbps_per_node,
                 "GB/s a node copies its shards off the GPUs: training blocks for that copy only, the write "
                 "follows (async checkpointing); default: blocked until durable")
      ->check(number_in(0, kMaxGbps, false));
  app.add_option("--part-size", part, "S3 part size (default 64M)");
  app.add_option("--format", format, "text|json")->check(CLI::IsMember({"text", "json"}));
  return run_reporting_errors("ccbench model checkpoint", [&] {
    if (!parse_flags_or_help(app, argc, argv, true)) return exit_code::ok;
    in.part_bytes = bytes_flag("--part-size", part, kFileBytes);
    if (in.part_bytes < (5ULL << 20) || in.part_bytes > (5ULL << 30))
      throw UsageError(fmt::format("--part-size: {} is outside S3's 5M..5G", part));
    in.workload = model::load_workload(workload_file);
    std::vector<Config> configs;
    for (const auto& t : config_texts) {
      try {
        configs.push_back(price(in, t));
      } catch (const std::invalid_argument& e) {
        // The formulas refuse what they cannot compute (a job that never finishes a segment, a
        // checkpoint time of 0): the message names the inputs that made it so.
        throw UsageError(fmt::format(
            "--config {}: {} (--node-mtbf-hours {:g} over --nodes {}: a job MTBF of {:.4g} s; --restart-s {:g})", t,
            e.what(), in.node_mtbf_hours, in.nodes, in.node_mtbf_hours * 3600.0 / in.nodes, in.restart_s));
      }
      for (const auto& w : configs.back().rates.warnings)
        std::fprintf(stderr, "ccbench model checkpoint: warning: --config %s: %s\n", t.c_str(), w.c_str());
    }
    if (format == "json") {
      json doc = {{"workload", in.workload.name},
                  {"nodes", in.nodes},
                  {"node_mtbf_hours", in.node_mtbf_hours},
                  {"job_mtbf_s", configs.front().job_mtbf_s},
                  {"checkpoint_bytes", configs.front().checkpoint_bytes},
                  {"configs", json::array()}};
      for (const auto& c : configs) doc["configs"].push_back(to_json(c));
      if (configs.size() == 2) doc["delta"] = delta_json(configs[0], configs[1]);
      std::printf("%s\n", doc.dump(1).c_str());
    } else {
      print_text(in, configs);
    }
    return exit_code::ok;
  });
}

const bool registered = register_model_subcommand(
    {"checkpoint", "what checkpoints cost a job: blocking, durable, Young/Daly interval, goodput", &checkpoint_main});

}  // namespace
}  // namespace ccbench::cli
