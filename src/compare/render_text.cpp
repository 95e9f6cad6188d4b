#include <fmt/format.h>

#include <algorithm>

#include "compare/render.hpp"

namespace ccbench::compare {

namespace {

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size() && i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      // Text columns (op) left-aligned, numbers right-aligned.
      l += i == 0 ? fmt::format("{:<{}}", cells[i], width[i]) : fmt::format("  {:>{}}", cells[i], width[i]);
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
  return out;
}

}  // namespace

std::string render_compare_text(const compare::Comparison& c) {
  using namespace compare_cells;
  std::string out;
  out += fmt::format("baseline:  {}\n", side_line(c.baseline));
  out += fmt::format("candidate: {}\n", side_line(c.candidate));
  out += metric_line(c) + "\n\n";
  if (!c.rows.empty()) {
    out += table(header(c), body(c));
    out += "\n";
    for (const auto& l : summary_lines(c)) out += l + "\n";
  }
  if (!c.only_in_baseline.empty() || !c.only_in_candidate.empty()) {
    out += "\n";
    auto list = [&](const char* what, const std::vector<compare::RowKey>& keys) {
      if (keys.empty()) return;
      out += fmt::format("only in {} ({}):", what, keys.size());
      for (const auto& k : keys) out += fmt::format(" {};", compare::format_key(k));
      out.back() = '\n';
    };
    list("baseline", c.only_in_baseline);
    list("candidate", c.only_in_candidate);
  }
  if (!c.differences.empty()) {
    out += "\ndifferences:\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& d : c.differences) rows.push_back({fmt::format("  {}", d.key), d.baseline, d.candidate});
    out += table({"  key", "baseline", "candidate"}, rows);
  }
  if (!c.warnings.empty()) {
    out += "\nwarnings:\n";
    for (const auto& w : c.warnings) out += fmt::format("  - {}\n", w);
  }
  out += "\n";
  if (c.claim) out += claim_line(c) + "\n";
  if (c.gate) {
    out += fmt::format("gate: regression, threshold {:.1f}% slower, Holm-Bonferroni alpha {}\n",
                       c.gate->threshold * 100, c.gate->alpha);
  }
  out += verdict_line(c) + "\n";
  return out;
}

}  // namespace ccbench::compare
