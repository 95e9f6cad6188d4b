#include "report/report_common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "report/renderers.hpp"

namespace ccbench::report {

namespace {

constexpr std::pair<Format, std::string_view> kFormats[] = {
    {Format::table, "table"}, {Format::markdown, "markdown"},     {Format::csv, "csv"},
    {Format::html, "html"},   {Format::prometheus, "prometheus"}, {Format::gbench, "gbench"},
};

}  // namespace

double median_of(std::vector<double> values) {
  std::ranges::sort(values);
  const std::size_t n = values.size();
  if (n == 0) return kNaN;
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::optional<Format> parse_format(std::string_view text) {
  for (const auto& [format, spelled] : kFormats) {
    if (text == spelled) return format;
  }
  if (text == "md") return Format::markdown;
  if (text == "prom") return Format::prometheus;
  if (text == "text" || text == "txt") return Format::table;
  return std::nullopt;
}

std::string_view name(Format format) {
  for (const auto& [f, spelled] : kFormats) {
    if (f == format) return spelled;
  }
  return "table";
}

std::optional<Format> format_for_path(std::string_view path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".html" || ext == ".htm") return Format::html;
  if (ext == ".md" || ext == ".markdown") return Format::markdown;
  if (ext == ".csv") return Format::csv;
  if (ext == ".prom") return Format::prometheus;
  if (ext == ".txt") return Format::table;
  return std::nullopt;
}

std::string render(Format format, const ReportInput& input) {
  switch (format) {
    case Format::table:
      return render_table(input);
    case Format::markdown:
      return render_markdown(input);
    case Format::csv:
      return render_csv(input);
    case Format::html:
      return render_html(input);
    case Format::prometheus:
      return render_prometheus(input);
    case Format::gbench:
      return render_gbench(input);
  }
  return render_table(input);
}

std::vector<std::string> display_labels(const std::vector<ResultFile>& files) {
  std::vector<std::string> labels;
  std::map<std::string, int> seen;
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::string label = files[i].run.label;
    if (label.empty() && !files[i].source.empty()) label = std::filesystem::path(files[i].source).stem().string();
    if (label.empty()) label = fmt::format("run {}", i + 1);
    const int n = ++seen[label];
    if (n > 1) label = fmt::format("{} ({})", label, n);
    labels.push_back(std::move(label));
  }
  return labels;
}

std::vector<Series> build_series(const ResultFile& file) {
  // Group rows by series and size, keeping the order in which series first appear.
  std::vector<SeriesKey> order;
  std::map<SeriesKey, std::map<std::uint64_t, std::vector<const ResultRow*>>> groups;
  for (const ResultRow& row : file.results) {
    SeriesKey key{row.op, row.backend, row.dtype, row.redop, row.in_place};
    auto [it, inserted] = groups.try_emplace(key);
    if (inserted) order.push_back(key);
    it->second[row.bytes].push_back(&row);
  }
  // Ops stay together in the order they first appear.
  std::vector<std::string> op_order;
  for (const auto& key : order) {
    if (std::ranges::find(op_order, key.op) == op_order.end()) op_order.push_back(key.op);
  }
  std::ranges::stable_sort(order, {},
                           [&](const SeriesKey& k) { return std::ranges::find(op_order, k.op) - op_order.begin(); });

  std::vector<Series> out;
  for (const auto& key : order) {
    Series series{key, {}};
    for (const auto& [bytes, rows] : groups[key]) {
      Point p;
      p.bytes = bytes;
      p.count = rows.front()->count;
      p.ranks = rows.front()->ranks;
      p.root = rows.front()->root;
      p.trials = static_cast<int>(rows.size());
      std::vector<double> medians, algbw, busbw;
      double lo = kNaN, hi = kNaN, blo = kNaN, bhi = kNaN;
      for (const ResultRow* r : rows) {
        medians.push_back(r->time_us.median);
        algbw.push_back(r->algbw_gbps);
        busbw.push_back(r->busbw_gbps);
        p.wrong += r->wrong;
        p.ci_target_met = p.ci_target_met && r->ci_target_met;
        const bool has_ci = r->time_us.ci95_hi > 0 && r->time_us.ci95_lo > 0 && r->time_us.median > 0;
        if (!has_ci) continue;
        lo = std::isnan(lo) ? r->time_us.ci95_lo : std::min(lo, r->time_us.ci95_lo);
        hi = std::isnan(hi) ? r->time_us.ci95_hi : std::max(hi, r->time_us.ci95_hi);
        // busbw is inversely proportional to time: the time CI's upper bound is busbw's lower one.
        const double b_lo = r->busbw_gbps * r->time_us.median / r->time_us.ci95_hi;
        const double b_hi = r->busbw_gbps * r->time_us.median / r->time_us.ci95_lo;
        blo = std::isnan(blo) ? b_lo : std::min(blo, b_lo);
        bhi = std::isnan(bhi) ? b_hi : std::max(bhi, b_hi);
      }
      p.time_median_us = median_of(medians);
      p.algbw_gbps = median_of(algbw);
      p.busbw_gbps = median_of(busbw);
      p.time_lo_us = lo;
      p.time_hi_us = hi;
      p.busbw_lo_gbps = blo;
      p.busbw_hi_gbps = bhi;
      series.points.push_back(p);
    }
    out.push_back(std::move(series));
  }
  return out;
}

std::vector<std::string> ops_in_order(const std::vector<ResultFile>& files) {
  std::vector<std::string> ops;
  for (const auto& f : files) {
    for (const auto& r : f.results) {
      if (std::ranges::find(ops, r.op) == ops.end()) ops.push_back(r.op);
    }
  }
  return ops;
}

std::string_view place_name(bool in_place) { return in_place ? "in-place" : "out-of-place"; }

std::string json_text(const nlohmann::json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return value.dump();
  if (value.is_number()) return exact(value.get<double>());
  if (value.is_array()) {
    std::string out;
    for (const auto& v : value) {
      if (!out.empty()) out += ", ";
      out += v.is_structured() ? v.dump() : json_text(v);
    }
    return out;
  }
  return value.dump();
}

namespace {

void flatten_into(const nlohmann::json& value, const std::string& prefix,
                  std::vector<std::pair<std::string, std::string>>& out) {
  if (value.is_object()) {
    for (const auto& [key, v] : value.items()) flatten_into(v, prefix.empty() ? key : prefix + "." + key, out);
    return;
  }
  const bool array_of_objects =
      value.is_array() && !value.empty() && std::ranges::all_of(value, [](const auto& v) { return v.is_object(); });
  if (!array_of_objects) {
    out.emplace_back(prefix, json_text(value));
    return;
  }
  // hosts, gpus, efa: the count, then per field the distinct values (a few, then "+N more").
  out.emplace_back(prefix + "[]", fmt::format("{} {}", value.size(), value.size() == 1 ? "entry" : "entries"));
  std::vector<std::string> keys;
  for (const auto& item : value) {
    for (const auto& [k, v] : item.items()) {
      if (std::ranges::find(keys, k) == keys.end()) keys.push_back(k);
    }
  }
  for (const auto& k : keys) {
    std::vector<std::string> distinct;
    for (const auto& item : value) {
      if (!item.contains(k)) continue;
      const auto& v = item[k];
      // Nested arrays of objects (a host's GPUs) summarise to their count.
      std::string text = v.is_array() && !v.empty() && v[0].is_object()
                             ? fmt::format("{} {}", v.size(), v.size() == 1 ? "entry" : "entries")
                         : v.is_structured() ? v.dump()
                                             : json_text(v);
      if (std::ranges::find(distinct, text) == distinct.end()) distinct.push_back(std::move(text));
    }
    std::string joined;
    constexpr std::size_t kShown = 4;
    for (std::size_t i = 0; i < distinct.size() && i < kShown; ++i) joined += (i ? ", " : "") + distinct[i];
    if (distinct.size() > kShown) joined += fmt::format(" (+{} more)", distinct.size() - kShown);
    out.emplace_back(prefix + "[]." + k, joined);
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> flatten_metadata(const ResultFile& file) {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("run.label", file.run.label);
  out.emplace_back("run.status", file.run.status);
  out.emplace_back("run.started_at", file.run.started_at);
  out.emplace_back("run.finished_at", file.run.finished_at);
  std::string command;
  for (const auto& c : file.run.command) command += (command.empty() ? "" : " ") + c;
  out.emplace_back("run.command", command);
  out.emplace_back("run.exit_code", std::to_string(file.run.exit_code));
  if (file.run.error) out.emplace_back("run.error", *file.run.error);
  for (const auto& [name, section] : {std::pair<const char*, const nlohmann::json*>{"tool", &file.tool},
                                      {"system", &file.system},
                                      {"fabric", &file.fabric},
                                      {"software", &file.software},
                                      {"config", &file.config},
                                      {"environment", &file.environment}}) {
    flatten_into(*section, name, out);
  }
  return out;
}

std::string claim_text(const nlohmann::json& claim) {
  if (!claim.is_object()) return json_text(claim);
  const auto field = [&claim](const char* key) {
    const auto it = claim.find(key);
    return it == claim.end() ? nlohmann::json() : *it;
  };
  const auto number = [&field](const char* key) -> std::optional<double> {
    const nlohmann::json v = field(key);
    return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
  };
  std::vector<std::string> parts;
  const nlohmann::json band = field("band");
  if (band.is_array() && band.size() == 2 && band[0].is_number() && band[1].is_number()) {
    std::string part = fmt::format("ratio band [{}, {}]", sig(band[0].get<double>()), sig(band[1].get<double>()));
    if (const auto e = number("expected_speedup")) {
      const auto t = number("tolerance");
      part += fmt::format(" (expected {:+.1f}%{})", *e * 100.0, t ? fmt::format(" ± {:.1f}%", *t * 100.0) : "");
    }
    parts.push_back(part);
  }
  if (const std::string metric = json_text(field("metric")); !metric.empty()) parts.push_back("metric " + metric);
  if (const std::string statistic = json_text(field("statistic")); !statistic.empty())
    parts.push_back("statistic " + statistic);
  if (const std::string ops = json_text(field("ops")); !ops.empty()) parts.push_back("ops " + ops);
  const nlohmann::json lo = field("min_bytes"), hi = field("max_bytes");
  if (lo.is_number_unsigned() && hi.is_number_unsigned()) {
    parts.push_back("sizes " + human_bytes(lo.get<std::uint64_t>()) + " to " + human_bytes(hi.get<std::uint64_t>()));
  } else if (lo.is_number_unsigned()) {
    parts.push_back("sizes from " + human_bytes(lo.get<std::uint64_t>()));
  } else if (hi.is_number_unsigned()) {
    parts.push_back("sizes up to " + human_bytes(hi.get<std::uint64_t>()));
  }
  if (const std::string n = json_text(field("normalize")); !n.empty() && n != "none") parts.push_back("normalize " + n);
  for (const char* side : {"baseline", "candidate"}) {
    const nlohmann::json req = field(side);
    if (!req.is_object() || req.empty()) continue;
    std::string text;
    for (const auto& [k, v] : req.items()) text += (text.empty() ? "" : ", ") + k + " " + json_text(v);
    parts.push_back(std::string(side) + " requires " + text);
  }
  std::string out;
  if (const std::string statement = json_text(field("statement")); !statement.empty()) out = "\"" + statement + "\"";
  std::string details;
  for (const auto& p : parts) details += (details.empty() ? "" : "; ") + p;
  if (!details.empty()) out += (out.empty() ? "" : " — ") + details;
  if (const std::string source = json_text(field("source")); !source.empty())
    out += (out.empty() ? "" : ". ") + std::string("Source: ") + source;
  return out;
}

std::string p_value_text(const nlohmann::json& p) {
  if (!p.is_number()) return "—";
  const double v = p.get<double>();
  if (v < 1e-4) return "<0.0001";
  return fmt::format("{:.2g}", v);
}

std::string exact(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

std::string sig(double value, int digits) {
  if (std::isnan(value)) return "N/A";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";  // log10 of it cannot become an int
  if (value == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const int decimals = std::clamp(digits - 1 - magnitude, 0, 9);
  return fmt::format("{:.{}f}", value, decimals);
}

std::string human_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024.0 && unit < 4) {
    v /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  if (v == std::floor(v)) return fmt::format("{:.0f} {}", v, kUnits[unit]);
  return fmt::format("{} {}", sig(v, 3), kUnits[unit]);
}

namespace {

// The object `key` of a row's extra fields, or null when the row has none (or something else).
const nlohmann::json* extra_object(const ResultRow& row, const char* key) {
  const auto it = row.extra.find(key);
  return it != row.extra.end() && it->is_object() ? &*it : nullptr;
}

std::optional<double> number_in(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

std::optional<MatrixFields> matrix_fields(const ResultRow& row) {
  const nlohmann::json* m = extra_object(row, "matrix");
  if (m == nullptr) return std::nullopt;
  return MatrixFields{number_in(*m, "imbalance"), number_in(*m, "most_loaded_gbps"), number_in(*m, "bound_us")};
}

std::optional<PatternFields> pattern_fields(const ResultRow& row) {
  const nlohmann::json* p = extra_object(row, "sendrecv_pattern");
  if (p == nullptr) return std::nullopt;
  const auto pattern = p->find("pattern");
  return PatternFields{pattern != p->end() && pattern->is_string() ? pattern->get<std::string>() : std::string(),
                       number_in(*p, "peer_group"), number_in(*p, "block_bytes"), number_in(*p, "aggregate_gbps"),
                       number_in(*p, "per_receiver_gbps")};
}

std::optional<ExpectedFields> expected_fields(const ResultRow& row) {
  const nlohmann::json* e = extra_object(row, "expected");
  if (e == nullptr) return std::nullopt;
  const auto text = [&](const char* key) {
    const auto it = e->find(key);
    return it != e->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  ExpectedFields out;
  out.verdict = text("verdict");
  out.metric = text("metric");
  out.band = text("band");
  out.lo = number_in(*e, "lo");
  out.hi = number_in(*e, "hi");
  out.predicted = number_in(*e, "predicted");
  out.measured = number_in(*e, "measured");
  out.shortfall_pct = number_in(*e, "shortfall_pct");
  out.basis = text("basis");
  out.model = text("model");
  out.reason = text("reason");
  return out;
}

bool any_expected(const std::vector<ResultFile>& files) {
  for (const auto& f : files)
    for (const auto& r : f.results)
      if (extra_object(r, "expected") != nullptr) return true;
  return false;
}

namespace {

// Band values of one metric in the other, through the measured value: the other metric is
// constant / this one, and the row's own value of it pairs with `measured`.
std::optional<ExpectedFields::Converted> convert(const ExpectedFields& e, bool same, double row_value) {
  if (!e.covered() || !e.lo || !e.hi || !e.predicted || !e.measured || !(*e.lo > 0) || !(*e.hi > 0) ||
      !(*e.predicted > 0) || !(*e.measured > 0) || !(row_value > 0) || !std::isfinite(row_value))
    return std::nullopt;
  if (same) return ExpectedFields::Converted{*e.lo, *e.hi, *e.predicted};
  const double c = row_value * *e.measured;
  return ExpectedFields::Converted{c / *e.hi, c / *e.lo, c / *e.predicted};
}

}  // namespace

std::optional<ExpectedFields::Converted> ExpectedFields::as_busbw(double row_busbw_gbps) const {
  // A matrix op's bandwidth is its most loaded rank's: not the row's busbw, so no band there.
  if (metric == "most_loaded_gbps") return std::nullopt;
  return convert(*this, metric == "busbw_gbps", row_busbw_gbps);
}

std::optional<ExpectedFields::Converted> ExpectedFields::as_time(double row_time_us) const {
  return convert(*this, metric == "time_us", row_time_us);
}

std::string expected_cell(const ExpectedFields& e) {
  if (e.verdict == "not_covered") return "not covered";
  if (e.verdict.empty()) return "-";
  std::string out = e.verdict;
  if (e.shortfall_pct) out += fmt::format(" {:+.1f}%", *e.shortfall_pct);
  return out;
}

std::string meta(const ResultFile& file, std::string_view section, std::string_view key) {
  const nlohmann::json* s = section == "system"     ? &file.system
                            : section == "fabric"   ? &file.fabric
                            : section == "software" ? &file.software
                            : section == "config"   ? &file.config
                            : section == "tool"     ? &file.tool
                                                    : &file.environment;
  const auto it = s->find(std::string(key));
  if (it == s->end()) return "";
  return json_text(*it);
}

}  // namespace ccbench::report
