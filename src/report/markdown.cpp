// GitHub-flavoured markdown for CI comments: the runs, the verdict when a comparison is overlaid,
// then one table per op with every run side by side (median time with its 95% CI, busbw).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/host_load_note.hpp"
#include "core/run_metadata.hpp"
#include "report/plan_table.hpp"
#include "report/renderers.hpp"
#include "report/report_common.hpp"
#include "report/row_tables.hpp"

namespace ccbench::report {

namespace {

// Markdown table cells: pipes escaped, newlines flattened.
std::string cell(std::string text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string num(const nlohmann::json& v, int digits = 4) {
  return v.is_number() ? sig(v.get<double>(), digits) : std::string("—");
}

std::string interval(const nlohmann::json& ci, int digits = 4) {
  if (!ci.is_array() || ci.size() != 2) return "—";
  return fmt::format("[{}, {}]", num(ci[0], digits), num(ci[1], digits));
}

void verdict_section(const nlohmann::json& v, std::string& out) {
  const std::string verdict = v.value("verdict", std::string("unknown"));
  out += fmt::format("### Verdict: **{}** (exit {})\n\n", verdict == "none" ? std::string("no verdict") : verdict,
                     v.contains("exit_code") ? v["exit_code"].dump() : "?");
  if (v.contains("reason") && v["reason"].is_string() && !v["reason"].get<std::string>().empty()) {
    out += cell(v["reason"].get<std::string>()) + "\n\n";
  }
  if (v.contains("summary") && v["summary"].is_object()) {
    const auto& s = v["summary"];
    out += fmt::format("{} ratio candidate/baseline **{}**, 95% CI {} over {} sizes (ratio > 1: candidate faster).\n\n",
                       s.value("statistic", std::string("geomean")), num(s.value("ratio", nlohmann::json())),
                       interval(s.value("ci", nlohmann::json())), s.contains("sizes") ? s["sizes"].dump() : "?");
  }
  if (v.contains("claim") && v["claim"].is_object() && !v["claim"].empty()) {
    out += "Claim: " + cell(claim_text(v["claim"])) + "\n\n";
  }
  if (v.contains("rows") && v["rows"].is_array() && !v["rows"].empty()) {
    out += "| op | size | ratio | 95% CI | p-value |\n|---|---:|---:|---|---:|\n";
    for (const auto& r : v["rows"]) {
      const auto bytes = r.value("bytes", nlohmann::json());
      const std::string op =
          json_text(r.value("op", nlohmann::json())) + (r.value("in_place", false) ? " (in-place)" : "");
      out += fmt::format("| {} | {} | {} | {} | {} |\n", cell(op),
                         bytes.is_number_unsigned() ? human_bytes(bytes.get<std::uint64_t>()) : json_text(bytes),
                         num(r.value("ratio", nlohmann::json())), interval(r.value("ci", nlohmann::json())),
                         p_value_text(r.value("p_value", nlohmann::json())));
    }
    out += "\n";
  }
  if (v.contains("differences") && v["differences"].is_object() && !v["differences"].empty()) {
    out += "| differs | baseline | candidate |\n|---|---|---|\n";
    for (const auto& [k, pair] : v["differences"].items()) {
      const std::string b = pair.is_array() && pair.size() > 0 ? json_text(pair[0]) : json_text(pair);
      const std::string c = pair.is_array() && pair.size() > 1 ? json_text(pair[1]) : "";
      out += fmt::format("| {} | {} | {} |\n", cell(k), cell(b), cell(c));
    }
    out += "\n";
  }
  if (v.contains("warnings") && v["warnings"].is_array()) {
    for (const auto& w : v["warnings"]) out += "> ⚠ " + cell(json_text(w)) + "\n";
    if (!v["warnings"].empty()) out += "\n";
  }
}

// A table of row fields under its heading; nothing when no row has the field.
void row_table_section(const std::string& title, const RowTable& table, std::string& out) {
  if (table.empty()) return;
  out += "### " + title + "\n\n|";
  for (const auto& h : table.header) out += fmt::format(" {} |", cell(h));
  out += "\n|";
  for (const bool numeric : table.numeric) out += numeric ? "---:|" : "---|";
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (const auto& c : row) out += fmt::format(" {} |", cell(c));
    out += "\n";
  }
  out += "\n";
}

}  // namespace

// The libraries the run's backend measured through (`own`), or the others the run found on the
// host: an MPI-only run on a machine with NCCL installed lists NCCL under "also found", not as if
// it had been used.
std::string libraries(const RunMetadata& m, bool own) {
  const std::string backend = m.text("backend");
  const std::vector<std::pair<std::string, std::string>> all = {
      {"NCCL", m.text("nccl")}, {"CUDA", m.text("cuda")}, {"MPI", m.text("mpi")}, {"libfabric", m.text("libfabric")}};
  const auto used = [&](const std::string& lib) {
    if (backend == "nccl") return lib == "NCCL" || lib == "CUDA";
    if (backend == "mpi") return lib == "MPI";
    if (backend == "libfabric" || backend == "fabric") return lib == "libfabric";
    return false;
  };
  std::string out;
  for (const auto& [lib, version] : all) {
    if (version.empty() || used(lib) != own) continue;
    out += (out.empty() ? "" : ", ") + lib + " " + version;
  }
  return out;
}

std::string render_markdown(const ReportInput& input) {
  std::string out = "## ccbench report\n\n";
  if (!input.generated_at.empty()) out += "Generated " + input.generated_at + ".\n\n";
  const auto labels = display_labels(input.files);
  out += "| run | instance | nodes × ranks | backend | fabric | libraries | also found | status |\n";
  out += "|---|---|---|---|---|---|---|---|\n";
  for (std::size_t f = 0; f < input.files.size(); ++f) {
    const ResultFile& file = input.files[f];
    std::string name = labels[f];
    if (f < input.baseline_files) name += " (baseline)";
    const RunMetadata m(file);
    const auto ranks = m.ranks();
    out += fmt::format("| {} | {} | {} × {} | {} | {} | {} | {} | {} |\n", cell(name), cell(m.text("instance_type")),
                       cell(m.text("nodes")), ranks ? std::to_string(*ranks) : std::string(), cell(m.text("backend")),
                       cell(fmt::format("{} {}", m.text("fabric_path"), m.text("efa_generation"))),
                       cell(libraries(m, true)), cell(libraries(m, false)), cell(file.run.status));
  }
  out += "\n";
  for (std::size_t f = 0; f < input.files.size(); ++f) {
    if (const auto busy = busy_host_note(input.files[f].system))
      out += "> ⚠ " + cell(labels[f] + ": " + *busy) + "\n\n";
  }
  if (input.verdict) verdict_section(*input.verdict, out);

  out +=
      "95% CIs are the precision of the median inside one launch, not across launches (docs/method.md); for an "
      "interval across launches, run separate launches (scripts/launches.sh) and compare them with ccbench "
      "compare.\n\n";
  // Per op and variant: one row per size, two columns (time, busbw) per run.
  std::vector<std::vector<Series>> all;
  for (const auto& file : input.files) all.push_back(build_series(file));
  std::vector<SeriesKey> keys;
  for (const auto& op : ops_in_order(input.files)) {
    for (const auto& file_series : all) {
      for (const auto& s : file_series) {
        if (s.key.op == op && std::ranges::find(keys, s.key) == keys.end()) keys.push_back(s.key);
      }
    }
  }
  for (const auto& key : keys) {
    std::vector<std::pair<std::size_t, const Series*>> columns;
    for (std::size_t f = 0; f < all.size(); ++f) {
      for (const auto& s : all[f]) {
        if (s.key == key) columns.emplace_back(f, &s);
      }
    }
    out +=
        fmt::format("### {} ({}, {}, {}, {})\n\n", key.op, key.backend, key.dtype, key.redop, place_name(key.in_place));
    std::string header = "| size |", rule = "|---:|";
    for (const auto& [f, s] : columns) {
      header += fmt::format(" {} time µs [95% CI] | {} busbw GB/s |", cell(labels[f]), cell(labels[f]));
      rule += "---:|---:|";
    }
    out += header + "\n" + rule + "\n";
    std::map<std::uint64_t, std::vector<const Point*>> rows;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      for (const auto& p : columns[c].second->points) {
        auto& row = rows[p.bytes];
        row.resize(columns.size(), nullptr);
        row[c] = &p;
      }
    }
    for (const auto& [bytes, pts] : rows) {
      out += "| " + human_bytes(bytes) + " |";
      for (const Point* p : pts) {
        if (p == nullptr) {
          out += " — | — |";
          continue;
        }
        const std::string ci =
            std::isnan(p->time_lo_us) ? "" : fmt::format(" [{}, {}]", sig(p->time_lo_us), sig(p->time_hi_us));
        out += fmt::format(" {}{}{} | {} |", sig(p->time_median_us), ci,
                           p->wrong ? fmt::format(" ❌ {} wrong", p->wrong) : "", sig(p->busbw_gbps));
      }
      out += "\n";
    }
    out += "\n";
  }
  row_table_section("Percentiles of per-iteration times (run --percentiles)", percentile_table(input.files, labels),
                    out);
  row_table_section("Expert-parallel and uneven all-to-all rows (run --matrix, --moe)",
                    matrix_table(input.files, labels), out);
  row_table_section("Point-to-point patterns (run --pattern)", pattern_table(input.files, labels), out);
  // Rows judged against a model (model check -o, run --expect): the summary per run, then every row.
  if (any_expected(input.files)) {
    out += "### Against the expectation\n\n";
    for (const auto& line : expected_summaries(input.files, labels)) out += "- " + cell(line) + "\n";
    out +=
        "\nbelow / above: outside the model's band (slower / faster); shortfall: how much slower than predicted "
        "(docs/model.md, \"Is my number normal? model check\").\n\n";
    RowTable table = expected_table(input.files, labels);
    for (auto& row : table.rows)
      for (auto& c : row)
        if (c == "below") c = "**below**";
    row_table_section("Rows against the expectation", table, out);
  }
  out += model_overlay_markdown(input) + (input.plan ? plan_markdown(*input.plan) : std::string());
  return out;
}

}  // namespace ccbench::report
