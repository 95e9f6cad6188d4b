#include <fmt/format.h>

#include <string_view>

#include "compare/render.hpp"

namespace ccbench::compare {

namespace {

// Text from the inputs (labels, paths, ops, reasons that quote them) that cannot change the
// markdown's structure: one line (newlines and other control characters become spaces), table
// pipes escaped, HTML's &, < and > as entities (no comment or tag can open), and a leading block
// marker escaped (no heading, quote or list can start). The CI posts this markdown as a PR comment:
// a label must not forge a verdict heading or hide the real one.
std::string escape(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (u < 0x20 || u == 0x7f) {
      out += ' ';
    } else if (ch == '|') {
      out += "\\|";
    } else if (ch == '&') {
      out += "&amp;";
    } else if (ch == '<') {
      out += "&lt;";
    } else if (ch == '>') {
      out += "&gt;";
    } else {
      out += ch;
    }
  }
  const auto first = out.find_first_not_of(' ');
  if (first == std::string::npos || std::string_view("#+-*=_~`").find(out[first]) == std::string_view::npos) {
    return out;
  }
  return out.substr(0, first) + '\\' + out.substr(first);
}

// Inside a code span: one line, and no backtick that could close it.
std::string code(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    out += u < 0x20 || u == 0x7f ? ' ' : ch == '`' ? '\'' : ch;
  }
  return "`" + out + "`";
}

std::string md_row(const std::vector<std::string>& cells) {
  std::string l = "|";
  for (const auto& c : cells) l += fmt::format(" {} |", escape(c));
  l += "\n";
  return l;
}

}  // namespace

std::string render_compare_markdown(const compare::Comparison& c) {
  using namespace compare_cells;
  std::string out;
  const int exit = compare::exit_code(c.verdict);
  const char* mark = exit == 0 ? (c.verdict == compare::Verdict::none ? "" : "✅ ") : exit == 1 ? "❌ " : "⚠️ ";
  out += fmt::format("### ccbench compare: {}**{}** (exit {})\n\n", mark, compare::name(c.verdict), exit);
  if (!c.reason.empty()) out += escape(c.reason) + "\n\n";
  if (c.claim) out += fmt::format("- {}\n", escape(claim_line(c)));
  if (c.gate) {
    out += fmt::format("- gate: regression, threshold {:.1f}% slower, Holm-Bonferroni alpha {}\n",
                       c.gate->threshold * 100, c.gate->alpha);
  }
  out += fmt::format("- baseline: {}\n", code(side_line(c.baseline)));
  out += fmt::format("- candidate: {}\n", code(side_line(c.candidate)));
  out += fmt::format("- {}\n\n", metric_line(c));
  if (!c.rows.empty()) {
    const auto h = header(c);
    out += md_row(h);
    std::string sep = "|";
    for (std::size_t i = 0; i < h.size(); ++i) sep += i < 2 ? " --- |" : " ---: |";
    out += sep + "\n";
    for (const auto& r : body(c)) out += md_row(r);
    out += "\n";
    for (const auto& l : summary_lines(c)) out += fmt::format("- {}\n", escape(l));
  }
  if (!c.only_in_baseline.empty() || !c.only_in_candidate.empty()) {
    out += "\n";
    auto list = [&](const char* what, const std::vector<compare::RowKey>& keys) {
      if (keys.empty()) return;
      out += fmt::format("- only in {} ({}):", what, keys.size());
      for (const auto& k : keys) {
        out += ' ';
        out += code(compare::format_key(k));
      }
      out += "\n";
    };
    list("baseline", c.only_in_baseline);
    list("candidate", c.only_in_candidate);
  }
  if (!c.differences.empty()) {
    out += "\n<details><summary>Differences</summary>\n\n| key | baseline | candidate |\n| --- | --- | --- |\n";
    for (const auto& d : c.differences) out += md_row({d.key, d.baseline, d.candidate});
    out += "\n</details>\n";
  }
  if (!c.warnings.empty()) {
    out += "\n**Warnings**\n\n";
    for (const auto& w : c.warnings) out += fmt::format("- {}\n", escape(w));
  }
  return out;
}

}  // namespace ccbench::compare
