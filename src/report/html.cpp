// One self-contained HTML page: inline CSS and SVG, no script, no fonts, no network. Per op, busbw
// and latency against size on log axes with every run overlaid and its 95% CI shaded; the verdict
// of an overlaid comparison with the per-size ratios; the runs' metadata side by side, differences
// highlighted; the numbers in tables under each chart.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/host_load_note.hpp"
#include "core/run_metadata.hpp"
#include "report/checkpoint_html.hpp"
#include "report/plan_table.hpp"
#include "report/renderers.hpp"
#include "report/report_common.hpp"
#include "report/row_tables.hpp"
#include "report/svg_chart.hpp"

namespace ccbench::report {

namespace {

constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 24px; color: #1a1a1a; background: #fafafa; }
h1 { margin: 0 0 4px 0; font-size: 22px; }
h2 { margin: 28px 0 8px 0; font-size: 18px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.sub { color: #555; font-size: 13px; }
.runs span.swatch { display: inline-block; width: 14px; height: 4px; margin-right: 6px; vertical-align: middle; }
.runs li { margin: 2px 0; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
.charts svg { background: #fff; border: 1px solid #e3e3e3; }
table { border-collapse: collapse; font-size: 12px; margin: 8px 0; background: #fff; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { background: #f0f0f0; }
td.key, th.key { text-align: left; font-family: monospace; }
table.meta td, table.meta th { text-align: left; max-width: 420px; overflow-wrap: anywhere; }
tr.diff td { background: #fff4d6; }
.verdict { padding: 12px 16px; border-radius: 6px; border: 1px solid #ccc; background: #fff; margin-top: 16px; }
.badge { display: inline-block; padding: 3px 10px; border-radius: 4px; color: #fff; font-weight: bold;
         text-transform: uppercase; letter-spacing: 0.5px; }
.good { background: #1b7f3b; } .bad { background: #b3261e; } .unsure { background: #a86400; } .other { background: #555; }
.warn { color: #8a4b00; }
details { margin: 6px 0 0 0; } summary { cursor: pointer; color: #333; font-size: 13px; }
footer { margin-top: 32px; color: #666; font-size: 12px; }
)";

std::string esc(const std::string& s) { return xml_escape(s); }

std::string verdict_class(const std::string& verdict) {
  if (verdict == "confirmed" || verdict == "pass") return "good";
  if (verdict == "refuted" || verdict == "regression") return "bad";
  if (verdict == "inconclusive") return "unsure";
  return "other";
}

std::string num(const nlohmann::json& v, int digits = 4) {
  return v.is_number() ? sig(v.get<double>(), digits) : std::string("—");
}

std::string interval(const nlohmann::json& ci) {
  if (!ci.is_array() || ci.size() != 2) return "—";
  return "[" + num(ci[0]) + ", " + num(ci[1]) + "]";
}

std::string verdict_section(const nlohmann::json& v, const std::vector<std::string>& labels,
                            std::size_t baseline_files) {
  const std::string verdict = v.value("verdict", std::string("unknown"));
  std::string out = "<section class=\"verdict\" id=\"verdict\">\n";
  out += fmt::format("<h2>Comparison</h2>\n<p><span class=\"badge {}\">{}</span> &nbsp;exit code {}",
                     verdict_class(verdict), esc(verdict == "none" ? std::string("no verdict") : verdict),
                     v.contains("exit_code") ? esc(v["exit_code"].dump()) : "?");
  if (baseline_files > 0 && labels.size() > baseline_files) {
    std::string base, cand;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      std::string& side = i < baseline_files ? base : cand;
      side += (side.empty() ? "" : ", ") + labels[i];
    }
    out += fmt::format(" &nbsp;— baseline <b>{}</b>, candidate <b>{}</b>", esc(base), esc(cand));
  }
  out += "</p>\n";
  if (v.contains("reason") && v["reason"].is_string() && !v["reason"].get<std::string>().empty()) {
    out += "<p>" + esc(v["reason"].get<std::string>()) + "</p>\n";
  }
  if (v.contains("summary") && v["summary"].is_object()) {
    const auto& s = v["summary"];
    out += fmt::format(
        "<p>{} of the per-size ratios candidate/baseline: <b>{}</b>, 95% CI {}, over {} sizes. A ratio above 1 means "
        "the "
        "candidate is faster.</p>\n",
        esc(s.value("statistic", std::string("geomean"))), num(s.value("ratio", nlohmann::json())),
        esc(interval(s.value("ci", nlohmann::json()))), s.contains("sizes") ? esc(s["sizes"].dump()) : "?");
  }
  std::optional<std::pair<double, double>> target;
  if (v.contains("claim") && v["claim"].is_object() && !v["claim"].empty()) {
    const auto& c = v["claim"];
    out += "<p>Claim: " + esc(claim_text(c)) + "</p>\n";
    if (c.contains("band") && c["band"].is_array() && c["band"].size() == 2 && c["band"][0].is_number() &&
        c["band"][1].is_number()) {
      target = std::pair{c["band"][0].get<double>(), c["band"][1].get<double>()};
    } else if (c.contains("expected_speedup") && c["expected_speedup"].is_number()) {
      const double e = c["expected_speedup"].get<double>();
      const double t = c.contains("tolerance") && c["tolerance"].is_number() ? c["tolerance"].get<double>() : 0.0;
      target = std::pair{1 + e - t, 1 + e + t};
    }
  }
  // Ratio against size, one curve per op.
  if (v.contains("rows") && v["rows"].is_array() && !v["rows"].empty()) {
    std::vector<std::string> ops;
    std::map<std::string, ChartSeries> by_op;
    for (const auto& r : v["rows"]) {
      std::string op = json_text(r.value("op", nlohmann::json()));
      if (r.value("in_place", false)) op += " (in-place)";
      if (!r.contains("bytes") || !r["bytes"].is_number() || !r.contains("ratio") || !r["ratio"].is_number()) continue;
      if (!by_op.contains(op)) {
        ops.push_back(op);
        by_op[op] = ChartSeries{op, series_color(ops.size() + 1), false, {}};  // runs use the first colours
      }
      ChartPoint p;
      p.x = r["bytes"].get<double>();
      p.y = r["ratio"].get<double>();
      if (r.contains("ci") && r["ci"].is_array() && r["ci"].size() == 2 && r["ci"][0].is_number() &&
          r["ci"][1].is_number()) {
        p.lo = r["ci"][0].get<double>();
        p.hi = r["ci"][1].get<double>();
      }
      p.tooltip = fmt::format("{} {}: ratio {} {}", op, human_bytes(static_cast<std::uint64_t>(p.x)), sig(p.y),
                              interval(r.value("ci", nlohmann::json())));
      by_op[op].points.push_back(p);
    }
    std::vector<ChartSeries> series;
    for (const auto& op : ops) {
      auto s = by_op[op];
      std::ranges::sort(s.points, {}, &ChartPoint::x);
      series.push_back(std::move(s));
    }
    ChartSpec spec;
    spec.title = "Speed ratio candidate / baseline (95% CI)";
    spec.x_label = "message size (bytes)";
    spec.y_label = "ratio (> 1: candidate faster)";
    spec.log_y = false;
    spec.reference_y = 1.0;
    spec.target_band = target;
    spec.width = 720;
    out += "<div class=\"charts\">\n" + svg_line_chart(spec, series) + "</div>\n";
    out +=
        "<details><summary>per-size ratios</summary>\n<table><tr><th class=\"key\">op</th><th>size</th><th>ratio</th>"
        "<th>95% CI</th><th>p-value</th></tr>\n";
    for (const auto& r : v["rows"]) {
      const auto& bytes = r.value("bytes", nlohmann::json());
      out += fmt::format("<tr><td class=\"key\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                         esc(json_text(r.value("op", nlohmann::json()))),
                         bytes.is_number_unsigned() ? human_bytes(bytes.get<std::uint64_t>()) : esc(json_text(bytes)),
                         num(r.value("ratio", nlohmann::json())), esc(interval(r.value("ci", nlohmann::json()))),
                         p_value_text(r.value("p_value", nlohmann::json())));
    }
    out += "</table></details>\n";
  }
  if (v.contains("differences") && v["differences"].is_object() && !v["differences"].empty()) {
    out +=
        "<details open><summary>metadata that differs between the sides</summary>\n<table class=\"meta\">"
        "<tr><th class=\"key\">key</th><th>baseline</th><th>candidate</th></tr>\n";
    for (const auto& [k, pair] : v["differences"].items()) {
      const std::string b = pair.is_array() && !pair.empty() ? json_text(pair[0]) : json_text(pair);
      const std::string c = pair.is_array() && pair.size() > 1 ? json_text(pair[1]) : "";
      out += fmt::format("<tr><td class=\"key\">{}</td><td>{}</td><td>{}</td></tr>\n", esc(k), esc(b), esc(c));
    }
    out += "</table></details>\n";
  }
  if (v.contains("warnings") && v["warnings"].is_array() && !v["warnings"].empty()) {
    out += "<ul class=\"warn\">\n";
    for (const auto& w : v["warnings"]) out += "<li>" + esc(json_text(w)) + "</li>\n";
    out += "</ul>\n";
  }
  return out + "</section>\n";
}

// One input of the report as the charts draw it: a file, or a folder of launches folded into one
// curve per series (a colour each), so 6 launches a side are two curves, not 12 in repeated colours.
struct Side {
  std::string label;
  std::vector<std::size_t> files;
  std::vector<Series> series;
};

// Several launches' series as one: per size the median over the launches of each launch's value,
// the band from the lowest to the highest launch (their spread, which is what decides a comparison).
std::vector<Series> fold_launches(const std::vector<std::vector<Series>>& launches) {
  std::vector<SeriesKey> order;
  std::map<SeriesKey, std::map<std::uint64_t, std::vector<const Point*>>> by_key;
  for (const auto& series : launches) {
    for (const auto& s : series) {
      auto [it, inserted] = by_key.try_emplace(s.key);
      if (inserted) order.push_back(s.key);
      for (const auto& p : s.points) it->second[p.bytes].push_back(&p);
    }
  }
  std::vector<Series> out;
  for (const auto& key : order) {
    Series folded{key, {}};
    for (const auto& [bytes, points] : by_key[key]) {
      if (points.size() == 1) {  // one launch measured this size: its own CI stays its band
        folded.points.push_back(*points.front());
        continue;
      }
      Point f = *points.front();
      std::vector<double> time, algbw, busbw;
      f.trials = 0;
      f.wrong = 0;
      for (const Point* p : points) {
        time.push_back(p->time_median_us);
        algbw.push_back(p->algbw_gbps);
        busbw.push_back(p->busbw_gbps);
        f.trials += p->trials;
        f.wrong += p->wrong;
        f.ci_target_met = f.ci_target_met && p->ci_target_met;
      }
      f.launches = static_cast<int>(points.size());
      f.time_median_us = median_of(time);
      f.algbw_gbps = median_of(algbw);
      f.busbw_gbps = median_of(busbw);
      f.time_lo_us = *std::ranges::min_element(time);
      f.time_hi_us = *std::ranges::max_element(time);
      f.busbw_lo_gbps = *std::ranges::min_element(busbw);
      f.busbw_hi_gbps = *std::ranges::max_element(busbw);
      folded.points.push_back(f);
    }
    out.push_back(std::move(folded));
  }
  return out;
}

// What makes files launches of one sweep: the same label, system and series (ops, variants). A
// folder of published results (other node counts, other ops) is not folded into one curve.
std::string sweep_identity(const ResultFile& file) {
  const RunMetadata m(file);
  std::string id = file.run.label + '\x1f' + m.text("instance_type") + '\x1f' + m.text("nodes") + '\x1f' +
                   std::to_string(m.ranks().value_or(0));
  std::set<SeriesKey> keys;
  for (const auto& row : file.results) keys.insert({row.op, row.backend, row.dtype, row.redop, row.in_place});
  for (const auto& k : keys) id += fmt::format("\x1f{}/{}/{}/{}/{}", k.op, k.backend, k.dtype, k.redop, k.in_place);
  return id;
}

// The sides the charts draw: per input as given (ReportInput::input_files), its files grouped into
// sweeps (sweep_identity); a sweep of several files is one side, folded, named after the input (or
// its label when the input holds several sweeps). Without input_files, or when they do not add up,
// a side per file.
std::vector<Side> sides_of(const ReportInput& input, const std::vector<std::string>& labels) {
  std::size_t listed = 0;
  for (const auto n : input.input_files) listed += n;
  std::vector<Side> sides;
  if (listed != input.files.size() || input.input_names.size() != input.input_files.size()) {
    for (std::size_t f = 0; f < input.files.size(); ++f)
      sides.push_back({labels[f], {f}, build_series(input.files[f])});
    return sides;
  }
  std::size_t next = 0;
  for (std::size_t i = 0; i < input.input_files.size(); ++i) {
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::size_t>> sweeps;
    for (std::size_t f = next; f < next + input.input_files[i]; ++f) {
      const std::string id = sweep_identity(input.files[f]);
      if (!sweeps.contains(id)) order.push_back(id);
      sweeps[id].push_back(f);
    }
    next += input.input_files[i];
    for (const auto& id : order) {
      const auto& files = sweeps[id];
      if (files.size() == 1) {
        sides.push_back({labels[files.front()], files, build_series(input.files[files.front()])});
        continue;
      }
      const std::string& label = input.files[files.front()].run.label;
      Side side{fmt::format("{} ({} launches)", order.size() == 1 || label.empty() ? input.input_names[i] : label,
                            files.size()),
                files,
                {}};
      std::vector<std::vector<Series>> launches;
      for (const auto f : files) launches.push_back(build_series(input.files[f]));
      side.series = fold_launches(launches);
      sides.push_back(std::move(side));
    }
  }
  return sides;
}

struct Curve {
  std::size_t side;
  const Series* series;
};

// The model's band for a curve's sizes, from its rows' `expected` objects (model check -o, run
// --expect): per size the first covered row's band, in busbw and in time (the two charts).
constexpr const char* kExpectedColor = "#6b6b6b";  // grey: not a run, the model's band for one
struct ExpectedCurve {
  ChartSeries busbw, time;
  std::string band;
};
std::optional<ExpectedCurve> expected_curve(const Side& side, const SeriesKey& key,
                                            const std::vector<ResultFile>& files, const std::string& curve_name,
                                            const std::string& color) {
  std::map<std::uint64_t, const ResultRow*> first;
  for (const auto f : side.files) {
    for (const ResultRow& r : files[f].results) {
      // Either variant: out-of-place and in-place rows of a size share one prediction.
      if (SeriesKey{r.op, r.backend, r.dtype, r.redop, key.in_place} != key || first.contains(r.bytes)) continue;
      const auto e = expected_fields(r);
      if (e && e->covered()) first[r.bytes] = &r;
    }
  }
  if (first.empty()) return std::nullopt;
  ExpectedCurve out;
  out.busbw.color = out.time.color = color;
  out.busbw.dashed = out.time.dashed = true;
  std::set<std::string> bands, models;
  for (const auto& [bytes, r] : first) {
    const ExpectedFields e = *expected_fields(*r);
    bands.insert(e.band);
    models.insert(e.model);
    const auto x = static_cast<double>(bytes);
    const std::string tip = fmt::format("{}: model {} ({} band{}), verdict {}{}", human_bytes(bytes), e.model, e.band,
                                        e.basis.empty() ? "" : ", " + e.basis, e.verdict,
                                        e.shortfall_pct ? fmt::format(", shortfall {:+.1f}%", *e.shortfall_pct) : "");
    if (const auto b = e.as_busbw(r->busbw_gbps))
      out.busbw.points.push_back(
          {x, b->predicted, b->lo, b->hi,
           tip + fmt::format("\nbusbw {} [{}, {}] GB/s", sig(b->predicted), sig(b->lo), sig(b->hi))});
    if (const auto t = e.as_time(r->time_us.median))
      out.time.points.push_back(
          {x, t->predicted, t->lo, t->hi,
           tip + fmt::format("\ntime {} [{}, {}] µs", sig(t->predicted), sig(t->lo), sig(t->hi))});
  }
  const auto joined = [](const std::set<std::string>& set) {
    std::string t;
    for (const auto& x : set) t += (t.empty() ? "" : ", ") + x;
    return t;
  };
  out.band = joined(bands);
  out.busbw.name = out.time.name = fmt::format("expected: {} ({} band) for {}", joined(models), out.band, curve_name);
  return out;
}

std::string op_section(const std::string& op, const std::vector<Side>& sides, const std::vector<ResultFile>& files) {
  std::vector<Curve> curves;
  for (std::size_t i = 0; i < sides.size(); ++i) {
    for (const auto& s : sides[i].series) {
      if (s.key.op == op) curves.push_back({i, &s});
    }
  }
  // Name a curve by its run, plus whatever else varies within this op.
  auto varies = [&](auto field) {
    std::set<std::string> values;
    for (const auto& c : curves) values.insert(field(c.series->key));
    return values.size() > 1;
  };
  const bool place_varies = varies([](const SeriesKey& k) { return std::string(place_name(k.in_place)); });
  const bool backend_varies = varies([](const SeriesKey& k) { return k.backend; });
  const bool dtype_varies = varies([](const SeriesKey& k) { return k.dtype; });
  const bool redop_varies = varies([](const SeriesKey& k) { return k.redop; });
  auto curve_name = [&](const Curve& c) {
    std::string name = sides[c.side].label;
    std::vector<std::string> extra;
    if (backend_varies) extra.push_back(c.series->key.backend);
    if (dtype_varies) extra.push_back(c.series->key.dtype);
    if (redop_varies) extra.push_back(c.series->key.redop);
    if (place_varies) extra.emplace_back(place_name(c.series->key.in_place));
    for (std::size_t i = 0; i < extra.size(); ++i) name += (i ? ", " : " (") + extra[i];
    return extra.empty() ? name : name + ")";
  };

  std::vector<ChartSeries> busbw, latency;
  for (const auto& c : curves) {
    const std::string name = curve_name(c);
    ChartSeries b{name, series_color(c.side), c.series->key.in_place, {}};
    ChartSeries t = b;
    for (const auto& p : c.series->points) {
      const auto x = static_cast<double>(p.bytes);
      const std::string tip = fmt::format(
          "{}\n{}: busbw {} GB/s{}, time {} us{}{}", name, human_bytes(p.bytes), sig(p.busbw_gbps),
          std::isnan(p.busbw_lo_gbps) ? "" : fmt::format(" [{}, {}]", sig(p.busbw_lo_gbps), sig(p.busbw_hi_gbps)),
          sig(p.time_median_us),
          std::isnan(p.time_lo_us) ? "" : fmt::format(" [{}, {}]", sig(p.time_lo_us), sig(p.time_hi_us)),
          p.launches > 1 ? fmt::format(", median of {} launches (band: their range)", p.launches)
          : p.trials > 1 ? fmt::format(", {} trials", p.trials)
                         : "");
      b.points.push_back({x, p.busbw_gbps, p.busbw_lo_gbps, p.busbw_hi_gbps, tip});
      t.points.push_back({x, p.time_median_us, p.time_lo_us, p.time_hi_us, tip});
    }
    busbw.push_back(std::move(b));
    latency.push_back(std::move(t));
  }
  // The model's band for the rows judged against one: dashed grey, shaded, one per run and series
  // (out-of-place and in-place rows of a size share one prediction, so the first curve of the two
  // draws it).
  std::set<std::pair<std::size_t, SeriesKey>> drawn;
  for (const auto& c : curves) {
    SeriesKey key = c.series->key;
    key.in_place = false;
    if (!drawn.insert({c.side, key}).second) continue;
    if (auto e = expected_curve(sides[c.side], c.series->key, files, sides[c.side].label, kExpectedColor)) {
      if (!e->busbw.points.empty()) busbw.push_back(std::move(e->busbw));
      if (!e->time.points.empty()) latency.push_back(std::move(e->time));
    }
  }
  std::string out =
      fmt::format("<section class=\"op\" id=\"op-{0}\">\n<h2>{0}</h2>\n<div class=\"charts\">\n", esc(op));
  ChartSpec spec;
  spec.x_label = "message size (bytes)";
  spec.title = op + ": bus bandwidth";
  spec.y_label = "busbw (GB/s)";
  out += svg_line_chart(spec, busbw);
  spec.title = op + ": latency (median time)";
  spec.y_label = "time (µs)";
  out += svg_line_chart(spec, latency);
  out += "</div>\n";

  // The numbers behind the charts.
  out += "<details><summary>data</summary>\n<table>\n<tr><th>size</th>";
  for (const auto& c : curves) out += fmt::format("<th colspan=\"2\">{}</th>", esc(curve_name(c)));
  out += "</tr>\n<tr><th></th>";
  for (std::size_t i = 0; i < curves.size(); ++i) out += "<th>time µs [95% CI]</th><th>busbw GB/s</th>";
  out += "</tr>\n";
  std::map<std::uint64_t, std::vector<const Point*>> rows;
  for (std::size_t i = 0; i < curves.size(); ++i) {
    for (const auto& p : curves[i].series->points) {
      auto& row = rows[p.bytes];
      row.resize(curves.size(), nullptr);
      row[i] = &p;
    }
  }
  for (const auto& [bytes, pts] : rows) {
    out += fmt::format("<tr><td>{}</td>", human_bytes(bytes));
    for (const Point* p : pts) {
      if (p == nullptr) {
        out += "<td>—</td><td>—</td>";
        continue;
      }
      out +=
          fmt::format("<td>{}{}{}</td><td>{}</td>", sig(p->time_median_us),
                      std::isnan(p->time_lo_us) ? "" : fmt::format(" [{}, {}]", sig(p->time_lo_us), sig(p->time_hi_us)),
                      p->wrong ? fmt::format(" <b class=\"warn\">{} wrong</b>", p->wrong) : "", sig(p->busbw_gbps));
    }
    out += "</tr>\n";
  }
  out += "</table>\n</details>\n</section>\n";
  return out;
}

std::string metadata_section(const std::vector<ResultFile>& files, const std::vector<std::string>& labels) {
  std::vector<std::string> keys;
  std::vector<std::map<std::string, std::string>> values(files.size());
  for (std::size_t f = 0; f < files.size(); ++f) {
    for (auto& [k, v] : flatten_metadata(files[f])) {
      if (!values[f].contains(k) && std::ranges::find(keys, k) == keys.end()) keys.push_back(k);
      values[f][k] = v;
    }
  }
  std::string out = "<section id=\"metadata\">\n<h2>Runs side by side</h2>\n";
  out +=
      "<p class=\"sub\">Highlighted rows differ between runs.</p>\n<table class=\"meta\">\n<tr><th "
      "class=\"key\">key</th>";
  for (const auto& l : labels) out += "<th>" + esc(l) + "</th>";
  out += "</tr>\n";
  for (const auto& k : keys) {
    std::set<std::string> distinct;
    for (const auto& v : values) distinct.insert(v.contains(k) ? v.at(k) : std::string("\x01"));
    out += fmt::format("<tr{}><td class=\"key\">{}</td>", distinct.size() > 1 ? " class=\"diff\"" : "", esc(k));
    for (const auto& v : values) out += "<td>" + (v.contains(k) ? esc(v.at(k)) : std::string("—")) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n</section>\n";
}

// A table of row fields as a section of its own; nothing when no row has the field.
std::string row_table_section(const char* id, const char* title, const char* note, const RowTable& table) {
  if (table.empty()) return "";
  std::string out = fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n<p class=\"sub\">{}</p>\n<table>\n<tr>", id,
                                esc(title), esc(note));
  for (const auto& h : table.header) out += "<th>" + esc(h) + "</th>";
  out += "</tr>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (const auto& c : row) out += "<td>" + esc(c) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n</section>\n";
}

}  // namespace

std::string render_html(const ReportInput& input) {
  const auto labels = display_labels(input.files);
  const std::vector<Side> sides = sides_of(input, labels);
  std::vector<std::size_t> side_of_file(input.files.size(), 0);
  for (std::size_t i = 0; i < sides.size(); ++i) {
    for (const auto f : sides[i].files) side_of_file[f] = i;
  }
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>ccbench report</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  out += "<header>\n<h1>ccbench report</h1>\n<p class=\"sub\">";
  out += fmt::format("{} run{}", input.files.size(), input.files.size() == 1 ? "" : "s");
  if (!input.generated_at.empty()) out += ", generated " + esc(input.generated_at);
  out +=
      ". Lines: median over trials of each trial's median time; shaded: 95% CI of the median. busbw follows "
      "nccl-tests.</p>\n<ul class=\"runs\">\n";
  for (std::size_t f = 0; f < input.files.size(); ++f) {
    const ResultFile& file = input.files[f];
    const RunMetadata m(file);
    const auto ranks = m.ranks();
    // What is known, comma-separated; an empty instance type or fabric is left out, not a dangling "— ,".
    std::vector<std::string> parts;
    const auto add = [&parts](const std::string& text) {
      if (!text.empty()) parts.push_back(text);
    };
    add(m.text("instance_type"));
    const std::string nodes = m.text("nodes");
    if (!nodes.empty()) add(nodes + (nodes == "1" ? " node" : " nodes"));
    if (ranks) add(std::to_string(*ranks) + (*ranks == 1 ? " rank" : " ranks"));
    if (!m.text("backend").empty()) add(m.text("backend") + " backend");
    std::string fabric = m.text("fabric_path");
    if (!m.text("efa_generation").empty()) fabric += (fabric.empty() ? "" : " ") + m.text("efa_generation");
    if (!fabric.empty()) add("fabric " + fabric);
    add("status " + file.run.status);
    std::string joined;
    for (const auto& p : parts) joined += (joined.empty() ? "" : ", ") + p;
    out += fmt::format(
        "<li><span class=\"swatch\" style=\"background:{}\"></span><b>{}</b>{} — {} <span "
        "class=\"sub\">({})</span></li>\n",
        series_color(side_of_file[f]), esc(labels[f]), f < input.baseline_files ? " (baseline)" : "", esc(joined),
        esc(file.source));
    if (const auto busy = busy_host_note(file.system))
      out += "<li class=\"warn\">" + esc(labels[f] + ": " + *busy) + "</li>\n";
  }
  out += "</ul>\n</header>\n";
  if (input.verdict) out += verdict_section(*input.verdict, labels, input.baseline_files);
  for (const auto& op : ops_in_order(input.files))
    if (!is_checkpoint_op(op)) out += op_section(op, sides, input.files);
  out += checkpoint_html_section(input.files, labels);
  out += row_table_section("percentiles", "Percentiles of per-iteration times",
                           "run --percentiles: one op a sample, the slowest rank; 95% order-statistic CIs "
                           "(docs/method.md).",
                           percentile_table(input.files, labels));
  out += row_table_section("matrix", "Expert-parallel and uneven all-to-all rows",
                           "run --matrix, --moe: imbalance = the most loaded rank's bytes / the mean a rank sends; "
                           "most-loaded GB/s = that rank's off-rank bytes / the median; bound = those bytes at "
                           "--link-gbps (docs/method.md).",
                           matrix_table(input.files, labels));
  if (any_expected(input.files)) {
    std::string note =
        "Rows judged against a model's band (ccbench model check -o, run --expect): below / above = "
        "slower / faster than the band; shortfall = how much slower than predicted (docs/model.md). ";
    for (const auto& line : expected_summaries(input.files, labels)) note += line + ". ";
    out += row_table_section("expected", "Against the expectation", note.c_str(), expected_table(input.files, labels));
  }
  out += row_table_section("sendrecv-patterns", "Point-to-point patterns",
                           "run --ops sendrecv --pattern: aggregate = every message the pattern moves / the median; "
                           "per-receiver = the most loaded receiver's messages / the median (docs/method.md).",
                           pattern_table(input.files, labels));
  out += metadata_section(input.files, labels);
  out += model_overlay_html(input) + (input.plan ? plan_html_section(*input.plan) : std::string());
  out +=
      "<footer>ccbench report. Sample: one iteration's time, the maximum over ranks after a synchronised start; "
      "busbw and algbw from the median time; CI: distribution-free 95% interval of the median, the precision "
      "inside one launch, not across launches (separate launches compared with ccbench compare give that: "
      "scripts/launches.sh).</footer>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace ccbench::report
