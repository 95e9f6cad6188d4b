// The plan document as text, markdown and HTML: the same tables in three syntaxes.
#include "report/plan_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_depth.hpp"
#include "core/percentiles.hpp"
#include "report/report_common.hpp"
#include "report/svg_chart.hpp"

namespace ccbench::report {

namespace {

using nlohmann::json;

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right;  // right-aligned columns
};

// Names the field of a plan document whose value has the wrong type: "<file>: <at>.<key>: ...".
struct FieldCheck {
  const std::string& where;

  [[noreturn]] void fail(const std::string& at, const char* key, const char* expected, const json& got) const {
    throw ParseError(fmt::format("{}: {}{}{}: expected {}, got {}", where, at, key[0] ? "." : "", key, expected,
                                 got.dump().substr(0, 40)));
  }
  void object(const json& j, const std::string& at) const {
    if (!j.is_object()) fail(at, "", "an object", j);
  }
  void boolean(const json& j, const std::string& at, const char* key) const {
    if (j.contains(key) && !j[key].is_boolean()) fail(at, key, "true or false", j[key]);
  }
  void unsigned_number(const json& j, const std::string& at, const char* key) const {
    if (j.contains(key) && !j[key].is_number_unsigned()) fail(at, key, "a whole number of 0 or more", j[key]);
  }
  void integer(const json& j, const std::string& at, const char* key) const {
    if (j.contains(key) &&
        !(j[key].is_number_integer() && j[key].get<long long>() >= INT_MIN && j[key].get<long long>() <= INT_MAX)) {
      fail(at, key, "a whole number", j[key]);
    }
  }
  // {"value": v, "lo": l, "hi": h}; a missing or non-numeric part prints as a dash.
  void interval(const json& j, const std::string& at, const char* key) const {
    if (j.contains(key) && !j[key].is_object() && !j[key].is_null()) fail(at, key, "an object {value, lo, hi}", j[key]);
  }
};

// j[key] for a const object, or null when the key is absent (const operator[] on a missing key is
// undefined behaviour in nlohmann).
const json& member(const json& j, const char* key) {
  static const json null_value;
  if (!j.is_object()) return null_value;
  const auto it = j.find(key);
  return it == j.end() ? null_value : *it;
}

double num(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return kNaN;
  return j[key].get<double>();
}

// "1.23e3 [1.1e3, 1.4e3]" in milliseconds, from an interval in microseconds.
std::string ms_interval(const json& interval) {
  const double v = num(interval, "value"), lo = num(interval, "lo"), hi = num(interval, "hi");
  if (std::isnan(v)) return "—";
  return fmt::format("{} [{}, {}]", sig(v / 1e3, 3), sig(lo / 1e3, 3), sig(hi / 1e3, 3));
}

std::string ratio_interval(const json& interval) {
  const double v = num(interval, "value"), lo = num(interval, "lo"), hi = num(interval, "hi");
  if (std::isnan(v)) return "—";
  return fmt::format("{}x [{}, {}]", sig(v, 3), sig(lo, 3), sig(hi, 3));
}

// Parameter counts as the workload files write them: 70B, 30.5B, 100M.
std::string count_text(double v) {
  if (v >= 1e12) return fmt::format("{:.4g}T", v / 1e12);
  if (v >= 1e9) return fmt::format("{:.4g}B", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.4g}M", v / 1e6);
  return fmt::format("{:.4g}", v);
}

std::string str(const json& j, const char* key) { return j.contains(key) ? json_text(j[key]) : std::string(); }

// A serving plan (docs/model.md "Planning a serving step"): its workload has `serving`.
const json* serving_of(const json& plan) {
  const json& s = member(member(plan, "workload"), "serving");
  return s.is_object() ? &s : nullptr;
}

std::string statistic_text(double percentile) {
  return percentile > 0 ? percentiles::key(percentile) : std::string("median");
}

// A phase's name in the tables: "prefill", "KV transfer", "decode step (p99)".
std::string phase_label(const std::string& phase, const json& serving) {
  if (phase == "kv_transfer") return "KV transfer";
  if (phase == "decode") return fmt::format("decode step ({})", statistic_text(num(serving, "percentile")));
  return phase;
}

// The serving request's line of the summary and its layout line.
void serving_summary(const json& w, const json& s, std::vector<std::string>& lines) {
  const json& pre = member(s, "prefill");
  lines.push_back(fmt::format(
      "{}; a request: {} prompt tokens, {} generated; KV cache {} per token; decode batch {}, its calls at the {}",
      str(w, "dtype"), str(s, "prompt_tokens"), str(s, "generated_tokens"),
      human_bytes(static_cast<std::uint64_t>(std::max(0.0, num(s, "kv_bytes_per_token")))), str(s, "batch"),
      statistic_text(num(s, "percentile"))));
  lines.push_back(fmt::format("decode: {} ranks = {} nodes x {}; tp {}, pp {}, dp {} (replicas), ep {}",
                              str(w, "ranks"), str(w, "nodes"), str(w, "ranks_per_node"), str(w, "tp"), str(w, "pp"),
                              str(w, "dp"), str(w, "ep")));
  lines.push_back(fmt::format(
      "prefill: {}, batch {}; tp {}, pp {}, ep {}",
      member(s, "disaggregated") == json(true) ? "disaggregated (ranks of its own)" : "colocated (on the decode ranks)",
      str(pre, "batch"), str(pre, "tp"), str(pre, "pp"), str(pre, "ep")));
}

std::vector<std::string> summary_lines(const json& plan) {
  const json& w = plan["workload"];
  std::vector<std::string> lines;
  std::string model = fmt::format("{} parameters, {} layers, hidden {}", count_text(num(w, "parameters")),
                                  str(w, "layers"), str(w, "hidden"));
  if (num(w, "experts") > 0) {
    model += fmt::format("; {} experts, top-{}, {} expert parameters", str(w, "experts"), str(w, "top_k"),
                         count_text(num(w, "expert_parameters")));
    if (w.contains("moe_routing") && w["moe_routing"].is_object()) {
      model += fmt::format(", routed as run --moe {} --seed {}", str(w["moe_routing"], "spec"),
                           str(w["moe_routing"], "seed"));
    }
  }
  lines.push_back(model);
  if (const json* s = serving_of(plan)) {
    serving_summary(w, *s, lines);
    return lines;
  }
  lines.push_back(fmt::format("{} (gradients {}), sequence {}, micro-batch {} x {} per step", str(w, "dtype"),
                              str(w, "grad_dtype"), str(w, "sequence_length"), str(w, "micro_batch"),
                              str(w, "micro_batches")));
  std::string layout =
      fmt::format("{} ranks = {} nodes x {}; tp {}, pp {}, dp {}, ep {}; sharding {}", str(w, "ranks"), str(w, "nodes"),
                  str(w, "ranks_per_node"), str(w, "tp"), str(w, "pp"), str(w, "dp"), str(w, "ep"), str(w, "sharding"));
  const std::string sharding = str(w, "sharding");
  if (sharding == "fsdp" || sharding == "zero3") layout += fmt::format(" (shard group {})", str(w, "shard_group"));
  if (sharding != "fsdp" && sharding != "zero3") {
    layout += fmt::format(", bucket {}", human_bytes(w.value("bucket_bytes", std::uint64_t{0})));
  }
  lines.push_back(layout);
  return lines;
}

std::vector<Table> tables(const json& plan) {
  std::vector<Table> out;
  const json& cs = plan["collectives"];
  const json* serving = serving_of(plan);
  Table step{"Collectives of one step, per rank",
             {"#", "op", "bytes per call", "group", "nodes", "calls per step", "overlaps compute", "what"},
             {},
             {true, false, true, true, true, true, false, false}};
  if (serving) {
    step = {"Collectives of one request, per rank (a decode step once: it recurs per generated token)",
            {"#", "phase", "op", "bytes per call", "group", "nodes", "calls", "priced at", "what"},
            {},
            {true, false, false, true, true, true, true, false, false}};
  }
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const json& c = cs[i];
    if (serving) {
      step.rows.push_back({std::to_string(i + 1), phase_label(str(c, "phase"), *serving), str(c, "op"),
                           human_bytes(c.value("bytes", std::uint64_t{0})), str(c, "group"), str(c, "nodes"),
                           str(c, "count"), statistic_text(num(c, "percentile")), str(c, "what")});
      continue;
    }
    step.rows.push_back({std::to_string(i + 1), str(c, "op"), human_bytes(c.value("bytes", std::uint64_t{0})),
                         str(c, "group"), str(c, "nodes"), str(c, "count"), c.value("overlaps", false) ? "yes" : "no",
                         str(c, "what")});
  }
  out.push_back(std::move(step));

  const json& ps = plan["profiles"];
  auto notes_of = [](const json& p) {
    std::vector<std::string> notes;
    if (p.value("from_spec", false)) notes.push_back("from spec");
    if (p.value("extrapolated", false)) notes.push_back("extrapolated");
    if (const int n = p.value("unpriced", 0); n > 0) notes.push_back(fmt::format("{} not priced", n));
    return fmt::format("{}", fmt::join(notes, ", "));
  };
  if (serving) {
    // One column per phase (its rows once), then the request: prefill + KV + generated x decode.
    std::vector<std::string> phases;
    for (const auto& c : cs)
      if (const std::string ph = str(c, "phase"); std::ranges::find(phases, ph) == phases.end()) phases.push_back(ph);
    Table totals{"Communication time per phase and per request, ms (90% band)", {"profile"}, {}, {false}};
    for (const auto& ph : phases) {
      totals.header.push_back(phase_label(ph, *serving));
      totals.right.push_back(true);
    }
    totals.header.insert(totals.header.end(),
                         {fmt::format("per request ({} decode steps)", str(*serving, "generated_tokens")), "notes"});
    totals.right.insert(totals.right.end(), {true, false});
    for (const auto& p : ps) {
      std::vector<std::string> row{str(p, "profile")};
      for (const auto& ph : phases) {
        std::string cell = "—";
        for (const auto& t : member(p, "phases")) {
          if (str(t, "phase") != ph) continue;
          const int unpriced = t.value("unpriced", 0), rows = t.value("rows", 0);
          cell = unpriced >= rows ? std::string("not priced") : ms_interval(member(t, "total_us"));
          if (unpriced > 0 && unpriced < rows) cell += fmt::format(" ({} not priced)", unpriced);
        }
        row.push_back(std::move(cell));
      }
      row.push_back(ms_interval(member(p, "total_us")));
      row.push_back(notes_of(p));
      totals.rows.push_back(std::move(row));
    }
    out.push_back(std::move(totals));
  } else {
    Table totals{"Communication time per step, ms (90% band)",
                 {"profile", "all collectives", "not overlapped", "notes"},
                 {},
                 {false, true, true, false}};
    for (const auto& p : ps) {
      totals.rows.push_back(
          {str(p, "profile"), ms_interval(member(p, "total_us")), ms_interval(member(p, "exposed_us")), notes_of(p)});
    }
    out.push_back(std::move(totals));
  }

  if (!ps.empty()) {
    Table per{serving ? "Per collective, ms per phase (90% band)" : "Per collective, ms per step (90% band)",
              {"#"},
              {},
              {true}};
    for (const auto& p : ps) {
      per.header.push_back(str(p, "profile"));
      per.right.push_back(true);
    }
    for (std::size_t i = 0; i < cs.size(); ++i) {
      std::vector<std::string> row{std::to_string(i + 1)};
      for (const auto& p : ps) {
        const json& r = p["rows"][i];
        std::string cell = r.value("priced", false) ? ms_interval(member(r, "step_us")) : "not priced";
        if (r.value("priced", false) && r.value("extrapolated", false)) cell += " (extrapolated)";
        row.push_back(std::move(cell));
      }
      per.rows.push_back(std::move(row));
    }
    out.push_back(std::move(per));

    // One line per profile and note, naming the rows it applies to.
    Table notes{"Notes", {"profile", "#", "note"}, {}, {false, false, false}};
    for (const auto& p : ps) {
      std::vector<std::pair<std::string, std::vector<std::string>>> by_note;
      for (std::size_t i = 0; i < p["rows"].size(); ++i) {
        const std::string note = str(p["rows"][i], "note");
        if (note.empty()) continue;
        auto it = std::find_if(by_note.begin(), by_note.end(), [&](const auto& n) { return n.first == note; });
        if (it == by_note.end()) it = by_note.insert(by_note.end(), {note, {}});
        it->second.push_back(std::to_string(i + 1));
      }
      for (const auto& [note, rows] : by_note) {
        notes.rows.push_back({str(p, "profile"), fmt::format("{}", fmt::join(rows, ", ")), note});
      }
    }
    if (!notes.rows.empty()) out.push_back(std::move(notes));
  }

  if (plan.contains("migration")) {
    const json& m = plan["migration"];
    Table mig{fmt::format("Migration {} -> {} ({} collectives priced on both)", str(m, "from"), str(m, "to"),
                          str(m, "rows_compared")),
              {"", "change, ms per step (90% interval)", "ratio (90% interval)"},
              {},
              {false, true, true}};
    if (serving) {
      mig.header[1] = "change, ms (90% interval)";
      for (const auto& t : member(m, "phases")) {
        mig.rows.push_back({phase_label(str(t, "phase"), *serving), ms_interval(member(t, "delta_us")),
                            ratio_interval(member(t, "ratio"))});
      }
      mig.rows.push_back(
          {"per request", ms_interval(member(m, "delta_total_us")), ratio_interval(member(m, "ratio_total"))});
    } else {
      mig.rows.push_back(
          {"all collectives", ms_interval(member(m, "delta_total_us")), ratio_interval(member(m, "ratio_total"))});
      mig.rows.push_back(
          {"not overlapped", ms_interval(member(m, "delta_exposed_us")), ratio_interval(member(m, "ratio_exposed"))});
    }
    out.push_back(std::move(mig));
  }
  return out;
}

std::string text_table(const Table& t) {
  std::vector<std::size_t> width(t.header.size(), 0);
  for (std::size_t c = 0; c < t.header.size(); ++c) width[c] = t.header[c].size();
  for (const auto& r : t.rows) {
    for (std::size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = " ";
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool last = c + 1 == cells.size();
      if (t.right[c]) {
        s += fmt::format(" {:>{}}", cells[c], width[c]);
      } else {
        s += last ? " " + cells[c] : fmt::format(" {:<{}}", cells[c], width[c]);
      }
    }
    return s + "\n";
  };
  std::string out = t.title + ":\n" + line(t.header);
  for (const auto& r : t.rows) out += line(r);
  return out;
}

std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string md_table(const Table& t) {
  std::string out = fmt::format("**{}**\n\n|", md_cell(t.title));
  for (const auto& h : t.header) out += fmt::format(" {} |", md_cell(h));
  out += "\n|";
  for (std::size_t c = 0; c < t.header.size(); ++c) out += t.right[c] ? " ---: |" : " --- |";
  out += "\n";
  for (const auto& r : t.rows) {
    out += "|";
    for (const auto& cell : r) out += fmt::format(" {} |", md_cell(cell));
    out += "\n";
  }
  return out + "\n";
}

std::string html_table(const Table& t) {
  std::string out = fmt::format("<h3>{}</h3>\n<table class=\"plan\">\n<thead><tr>", xml_escape(t.title));
  for (std::size_t c = 0; c < t.header.size(); ++c) {
    out += fmt::format("<th{}>{}</th>", t.right[c] ? " class=\"num\"" : "", xml_escape(t.header[c]));
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& r : t.rows) {
    out += "<tr>";
    for (std::size_t c = 0; c < r.size(); ++c) {
      out += fmt::format("<td{}>{}</td>", t.right[c] ? " class=\"num\"" : "", xml_escape(r[c]));
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string title(const json& plan) {
  return fmt::format("Plan: {} ({})", str(plan["workload"], "name"), str(plan["workload"], "source"));
}

}  // namespace

void check_plan_document(const json& plan, const std::string& where) {
  if (!plan.is_object()) throw ParseError(fmt::format("{}: a plan document is a JSON object", where));
  if (!plan.contains("plan_version") || !plan["plan_version"].is_number_integer()) {
    throw ParseError(
        fmt::format("{}: plan_version: missing (is this `ccbench model plan --format json` output?)", where));
  }
  if (plan["plan_version"].get<long long>() != 1) {
    throw ParseError(fmt::format("{}: plan_version: is {}, this ccbench reads 1", where, plan["plan_version"].dump()));
  }
  for (const char* key : {"workload", "collectives", "profiles"}) {
    if (!plan.contains(key)) throw ParseError(fmt::format("{}: {}: missing", where, key));
  }
  if (!plan["workload"].is_object()) throw ParseError(fmt::format("{}: workload: expected an object", where));
  if (!plan["collectives"].is_array()) throw ParseError(fmt::format("{}: collectives: expected an array", where));
  if (!plan["profiles"].is_array()) throw ParseError(fmt::format("{}: profiles: expected an array", where));
  // Every field the tables read with a type, checked here so a hand-edited value is named rather
  // than surfacing as nlohmann's type_error from deep inside a renderer.
  const FieldCheck check{where};
  check.unsigned_number(plan["workload"], "workload", "bucket_bytes");
  const std::size_t n = plan["collectives"].size();
  for (std::size_t i = 0; i < n; ++i) {
    const json& c = plan["collectives"][i];
    const std::string at = fmt::format("collectives[{}]", i);
    check.object(c, at);
    check.unsigned_number(c, at, "bytes");
    check.boolean(c, at, "overlaps");
    if (c.contains("phase") && !c["phase"].is_string()) check.fail(at, "phase", "a phase name", c["phase"]);
  }
  for (std::size_t i = 0; i < plan["profiles"].size(); ++i) {
    const json& p = plan["profiles"][i];
    const std::string at = fmt::format("profiles[{}]", i);
    if (!p.is_object() || !p.contains("rows") || !p["rows"].is_array() || p["rows"].size() != n) {
      throw ParseError(fmt::format("{}: {}.rows: expected one row per collective ({})", where, at, n));
    }
    check.boolean(p, at, "from_spec");
    check.boolean(p, at, "extrapolated");
    check.integer(p, at, "unpriced");
    check.interval(p, at, "total_us");
    check.interval(p, at, "exposed_us");
    if (p.contains("phases")) {
      if (!p["phases"].is_array()) check.fail(at, "phases", "an array", p["phases"]);
      for (std::size_t k = 0; k < p["phases"].size(); ++k) {
        const std::string phase_at = fmt::format("{}.phases[{}]", at, k);
        check.object(p["phases"][k], phase_at);
        check.interval(p["phases"][k], phase_at, "total_us");
        check.integer(p["phases"][k], phase_at, "rows");
        check.integer(p["phases"][k], phase_at, "unpriced");
      }
    }
    for (std::size_t r = 0; r < n; ++r) {
      const json& row = p["rows"][r];
      const std::string row_at = fmt::format("{}.rows[{}]", at, r);
      check.object(row, row_at);
      check.boolean(row, row_at, "priced");
      check.boolean(row, row_at, "extrapolated");
      check.interval(row, row_at, "step_us");
    }
  }
  if (plan.contains("migration")) {
    const json& m = plan["migration"];
    check.object(m, "migration");
    for (const char* key : {"delta_total_us", "ratio_total", "delta_exposed_us", "ratio_exposed"}) {
      check.interval(m, "migration", key);
    }
    if (m.contains("phases")) {
      if (!m["phases"].is_array()) check.fail("migration", "phases", "an array", m["phases"]);
      for (std::size_t k = 0; k < m["phases"].size(); ++k) {
        const std::string phase_at = fmt::format("migration.phases[{}]", k);
        check.object(m["phases"][k], phase_at);
        check.interval(m["phases"][k], phase_at, "delta_us");
        check.interval(m["phases"][k], phase_at, "ratio");
      }
    }
  }
}

json load_plan_document(const std::filesystem::path& path) {
  std::string text;
  try {
    text = read_input_file(path);  // refuses a FIFO (a plain open would block on it), a folder, a device
  } catch (const ParseError& e) {
    throw ParseError(std::string("--plan ") + e.what());
  }
  check_json_depth(text, path.string());
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw ParseError(path.string() + ": malformed JSON (" + e.what() + ")");
  }
  check_plan_document(doc, path.string());
  return doc;
}

std::string plan_text(const json& plan) {
  std::string out = title(plan) + "\n";
  for (const auto& l : summary_lines(plan)) {
    out += "  ";  // piecewise: GCC 12 at -O3 warns (-Wrestrict) on "literal" + std::string
    out += l;
    out += '\n';
  }
  for (const auto& t : tables(plan)) {
    out += '\n';
    out += text_table(t);
  }
  return out;
}

std::string plan_markdown(const json& plan) {
  std::string out = fmt::format("## {}\n\n", md_cell(title(plan)));
  for (const auto& l : summary_lines(plan)) {
    out += "- ";
    out += md_cell(l);
    out += '\n';
  }
  out += "\n";
  for (const auto& t : tables(plan)) out += md_table(t);
  return out;
}

std::string plan_html_section(const json& plan) {
  std::string out = fmt::format("<section class=\"plan\">\n<h2>{}</h2>\n<ul>\n", xml_escape(title(plan)));
  for (const auto& l : summary_lines(plan)) out += fmt::format("<li>{}</li>\n", xml_escape(l));
  out += "</ul>\n";
  for (const auto& t : tables(plan)) out += html_table(t);
  return out + "</section>\n";
}

std::string plan_html_page(const json& plan) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n"
      "body{{font-family:system-ui,sans-serif;margin:2em;color:#222}}\n"
      "table.plan{{border-collapse:collapse;margin:0.5em 0 1.5em}}\n"
      "table.plan th,table.plan td{{border:1px solid #ccc;padding:0.25em 0.6em;text-align:left}}\n"
      "table.plan .num{{text-align:right;font-variant-numeric:tabular-nums}}\n"
      "</style>\n</head>\n<body>\n{}</body>\n</html>\n",
      xml_escape(title(plan)), plan_html_section(plan));
}

}  // namespace ccbench::report
