// Prometheus text exposition format 0.0.4, for node_exporter's textfile collector or a pushgateway.
//
// Names carry their unit. Bandwidths keep the GB/s of the result file (ccbench_busbw_gbps, the
// number people quote); times use seconds, Prometheus' base unit, because promtool rejects
// abbreviated units such as _us. Every series of a run carries `label` and `instance_type` so a
// dashboard can put fleets side by side; ccbench_run_info holds the rest of the metadata.
#include <fmt/format.h>

#include <cstdio>
#include <ctime>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/run_metadata.hpp"
#include "report/console_table.hpp"
#include "report/renderers.hpp"
#include "report/report_common.hpp"

namespace ccbench::report {

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

// Label values escape backslash, double quote and line feed.
std::string escape_label(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string label_set(const Labels& labels) {
  std::string out = "{";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    out += fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first, escape_label(labels[i].second));
  }
  return out + "}";
}

// Seconds since the epoch of an ISO 8601 UTC timestamp ("2026-11-30T10:49:37.123Z"); -1 when unreadable.
double epoch_seconds(const std::string& iso) {
  std::tm tm{};
  double frac = 0;
  int consumed = 0;
  // Field widths keep sscanf from overflowing an int (a fuzzed year of 10^10 became INT_MIN, then
  // tm_year - 1900 overflowed: found by the sanitizer fuzz run).
  if (std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &consumed) != 6 ||
      tm.tm_year < 1 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour < 0 ||
      tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 || tm.tm_sec > 60) {
    return -1;
  }
  if (iso[static_cast<std::size_t>(consumed)] == '.') std::sscanf(iso.c_str() + consumed, "%lf", &frac);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(::timegm(&tm)) + frac;
}

struct Writer {
  std::string out;
  std::set<std::string> seen;  // a series may appear once; a duplicate (same labels) is dropped

  void family(const char* name, const char* type, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void sample(const std::string& name, const Labels& labels, double value) {
    std::string line = name + label_set(labels);
    if (!seen.insert(line).second) return;
    out += line + " " + exact(value) + "\n";
  }
};

}  // namespace

std::string render_prometheus(const ReportInput& input) {
  Writer w;
  const auto names = display_labels(input.files);
  auto run_labels = [&](std::size_t f) {
    return Labels{{"label", names[f]}, {"instance_type", RunMetadata(input.files[f]).text("instance_type")}};
  };
  auto row_labels = [&](std::size_t f, const ResultRow& r) {
    Labels l = run_labels(f);
    l.insert(l.end(), {{"op", r.op},
                       {"backend", r.backend},
                       {"dtype", r.dtype},
                       {"redop", r.redop},
                       {"in_place", r.in_place ? "true" : "false"},
                       {"bytes", std::to_string(r.bytes)},
                       {"ranks", std::to_string(r.ranks)},
                       {"trial", std::to_string(r.trial)}});
    return l;
  };
  auto for_rows = [&](const std::function<void(std::size_t, const ResultRow&)>& fn) {
    for (std::size_t f = 0; f < input.files.size(); ++f) {
      for (const ResultRow& r : input.files[f].results) fn(f, r);
    }
  };

  w.family("ccbench_run_info", "gauge", "Metadata of a ccbench run; the value is always 1.");
  for (std::size_t f = 0; f < input.files.size(); ++f) {
    const ResultFile& file = input.files[f];
    Labels l = run_labels(f);
    const RunMetadata m(file);
    const auto ranks = m.ranks();
    l.insert(l.end(), {{"status", file.run.status}, {"ranks", ranks ? std::to_string(*ranks) : std::string()}});
    // The metadata keys the table marks as Prometheus labels (core/run_metadata.hpp).
    for (const auto& key : metadata_keys()) {
      if ((key.roles & meta_role::prometheus_label) != 0) l.emplace_back(std::string(key.prometheus), m.text(key.name));
    }
    l.insert(l.end(), {{"version", meta(file, "tool", "version")}, {"git", meta(file, "tool", "git")}});
    w.sample("ccbench_run_info", l, 1);
  }
  w.family("ccbench_run_finished_timestamp_seconds", "gauge",
           "When the run finished (Unix time), so a stale textfile can be told from a fresh one.");
  for (std::size_t f = 0; f < input.files.size(); ++f) {
    const double t = epoch_seconds(input.files[f].run.finished_at);
    if (t >= 0) w.sample("ccbench_run_finished_timestamp_seconds", run_labels(f), t);
  }
  w.family("ccbench_busbw_gbps", "gauge",
           "Bus bandwidth in GB/s (1e9 bytes/s) from the median time, nccl-tests convention.");
  for_rows([&](std::size_t f, const ResultRow& r) { w.sample("ccbench_busbw_gbps", row_labels(f, r), r.busbw_gbps); });
  w.family("ccbench_algbw_gbps", "gauge", "Algorithm bandwidth in GB/s (1e9 bytes/s): bytes / median time.");
  for_rows([&](std::size_t f, const ResultRow& r) { w.sample("ccbench_algbw_gbps", row_labels(f, r), r.algbw_gbps); });
  w.family("ccbench_time_seconds", "summary",
           "Time of one operation (max over ranks) in seconds: quantile 0 is the minimum, 1 the maximum.");
  for_rows([&](std::size_t f, const ResultRow& r) {
    const Labels base = row_labels(f, r);
    for (const auto& [q, v] : {std::pair{"0", r.time_us.min}, std::pair{"0.5", r.time_us.median},
                               std::pair{"0.99", r.time_us.p99}, std::pair{"1", r.time_us.max}}) {
      Labels l = base;
      l.emplace_back("quantile", q);
      w.sample("ccbench_time_seconds", l, v / 1e6);
    }
    const double n = static_cast<double>(r.samples_us.size());
    w.sample("ccbench_time_seconds_sum", base, r.time_us.mean * n / 1e6);
    w.sample("ccbench_time_seconds_count", base, n);
  });
  w.family("ccbench_time_median_ci95_seconds", "gauge",
           "Bounds of the 95% confidence interval of the median time, in seconds.");
  for_rows([&](std::size_t f, const ResultRow& r) {
    if (r.time_us.ci95_hi <= 0) return;
    for (const auto& [bound, v] : {std::pair{"lower", r.time_us.ci95_lo}, std::pair{"upper", r.time_us.ci95_hi}}) {
      Labels l = row_labels(f, r);
      l.emplace_back("bound", bound);
      w.sample("ccbench_time_median_ci95_seconds", l, v / 1e6);
    }
  });
  // run --percentiles: each level of the per-iteration times and its CI (only when some row has them).
  if (const std::vector<double> levels = percentile_levels(input.files); !levels.empty()) {
    w.family("ccbench_time_percentile_seconds", "gauge",
             "Percentile of per-iteration times (run --percentiles, one op a sample, max over ranks), seconds.");
    for_rows([&](std::size_t f, const ResultRow& r) {
      for (const double p : levels) {
        const auto level = percentile_value(r, p);
        if (!level) continue;
        Labels l = row_labels(f, r);
        l.emplace_back("percentile", exact(p));
        w.sample("ccbench_time_percentile_seconds", l, level->value_us / 1e6);
      }
    });
    w.family("ccbench_time_percentile_ci95_seconds", "gauge",
             "Bounds of the 95% order-statistic confidence interval of each percentile, in seconds.");
    for_rows([&](std::size_t f, const ResultRow& r) {
      for (const double p : levels) {
        const auto level = percentile_value(r, p);
        if (!level || !level->ci95_us) continue;
        for (const auto& [bound, v] :
             {std::pair{"lower", level->ci95_us->first}, std::pair{"upper", level->ci95_us->second}}) {
          Labels l = row_labels(f, r);
          l.emplace_back("percentile", exact(p));
          l.emplace_back("bound", bound);
          w.sample("ccbench_time_percentile_ci95_seconds", l, v / 1e6);
        }
      }
    });
  }
  // Matrix ops (--matrix, --moe) and patterned sendrecv (--pattern, --block-bytes): their load and
  // rates, each family only when some row has its field. bound_us stays out: a time would be
  // seconds here, and the bound is an input (--link-gbps) applied to bytes, not a measurement.
  const auto gauge = [&](const char* metric, const char* help, const auto& value_of) {
    bool any = false;
    for_rows([&](std::size_t, const ResultRow& r) { any = any || value_of(r).has_value(); });
    if (!any) return;
    w.family(metric, "gauge", help);
    for_rows([&](std::size_t f, const ResultRow& r) {
      if (const std::optional<double> v = value_of(r)) w.sample(metric, row_labels(f, r), *v);
    });
  };
  const auto matrix = [](const ResultRow& r) { return matrix_fields(r).value_or(MatrixFields{}); };
  const auto pattern = [](const ResultRow& r) { return pattern_fields(r).value_or(PatternFields{}); };
  gauge("ccbench_matrix_imbalance", "Matrix ops: the most loaded rank's bytes over the mean bytes a rank sends.",
        [&](const ResultRow& r) { return matrix(r).imbalance; });
  gauge("ccbench_most_loaded_gbps",
        "Matrix ops: the rate the most loaded rank's off-rank bytes moved at, GB/s (1e9 bytes/s), from the median.",
        [&](const ResultRow& r) { return matrix(r).most_loaded_gbps; });
  gauge("ccbench_sendrecv_aggregate_gbps",
        "sendrecv patterns: every message the pattern moves over the median time, GB/s (1e9 bytes/s).",
        [&](const ResultRow& r) { return pattern(r).aggregate_gbps; });
  gauge("ccbench_sendrecv_per_receiver_gbps",
        "sendrecv patterns: the most loaded receiver's messages over the median time, GB/s (1e9 bytes/s).",
        [&](const ResultRow& r) { return pattern(r).per_receiver_gbps; });
  // Rows judged against a model (`expected`: model check -o, run --expect), only when some row is.
  if (any_expected(input.files)) {
    w.family("ccbench_expected_verdict", "gauge",
             "The row against the model's band: 1 for its verdict (normal, below, above, not_covered), 0 for the "
             "others.");
    for_rows([&](std::size_t f, const ResultRow& r) {
      const auto e = expected_fields(r);
      if (!e || e->verdict.empty()) return;
      for (const char* v : {"normal", "below", "above", "not_covered"}) {
        Labels l = row_labels(f, r);
        l.emplace_back("verdict", v);
        w.sample("ccbench_expected_verdict", l, e->verdict == v ? 1 : 0);
      }
    });
    w.family("ccbench_expected_shortfall_pct", "gauge",
             "How much slower than the model predicted, percent of its busbw (or time, latency-bound sizes); "
             "negative: faster.");
    for_rows([&](std::size_t f, const ResultRow& r) {
      const auto e = expected_fields(r);
      if (e && e->covered() && e->shortfall_pct)
        w.sample("ccbench_expected_shortfall_pct", row_labels(f, r), *e->shortfall_pct);
    });
    w.family("ccbench_expected_busbw_gbps", "gauge",
             "The model's busbw for the row, GB/s (1e9 bytes/s): bound lower/upper its band, predicted its value.");
    for_rows([&](std::size_t f, const ResultRow& r) {
      const auto e = expected_fields(r);
      const auto c = e ? e->as_busbw(r.busbw_gbps) : std::nullopt;
      if (!c) return;
      for (const auto& [bound, v] :
           {std::pair{"lower", c->lo}, std::pair{"upper", c->hi}, std::pair{"predicted", c->predicted}}) {
        Labels l = row_labels(f, r);
        l.emplace_back("bound", bound);
        w.sample("ccbench_expected_busbw_gbps", l, v);
      }
    });
  }
  w.family("ccbench_wrong_elements", "gauge", "Elements that failed the data check (0 when correct).");
  for_rows([&](std::size_t f, const ResultRow& r) {
    w.sample("ccbench_wrong_elements", row_labels(f, r), static_cast<double>(r.wrong));
  });
  w.family("ccbench_ci_target_met", "gauge", "1 when sampling reached the target CI width before its time ran out.");
  for_rows([&](std::size_t f, const ResultRow& r) {
    w.sample("ccbench_ci_target_met", row_labels(f, r), r.ci_target_met ? 1 : 0);
  });
  return w.out;
}

}  // namespace ccbench::report
