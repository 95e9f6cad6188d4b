// CLI11's "The following arguments were not expected: 4M --max-byte" with the flag meant:
// "... (did you mean --max-bytes?)". Header-only: every command's parse error goes through it.
// In sweep, beside session_flags.hpp: the flag parsing of fabric (below cli) uses it too.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench {

namespace flag_suggestion_detail {

// Optimal string alignment distance (an adjacent swap counts one edit, as typos go).
inline std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace flag_suggestion_detail

// The closest long flag of `app` to `typo` ("--max-byte" -> "--max-bytes"), or "" when none is
// within 2 edits (or a third of the name): a guess further off would mislead.
inline std::string closest_flag(const CLI::App& app, std::string_view typo) {
  std::string name(typo.substr(0, typo.find('=')));
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& l : opt->get_lnames()) {
      const std::string flag = "--" + l;
      const std::size_t d = flag_suggestion_detail::distance(name, flag);
      if (d < best_d) {
        best_d = d;
        best = flag;
      }
    }
  }
  return best == name ? std::string() : best;
}

// e.what(), with "(did you mean --X?)" for each unexpected argument that looks like a mistyped flag.
inline std::string parse_error_text(const CLI::App& app, const CLI::ParseError& e) {
  std::string text = e.what();
  // CLI11's ExtrasError lists the arguments after the colon ("...not expected: 4M --max-byte").
  const std::string_view lead = "not expected: ";
  const auto at = text.find(lead);
  if (text.rfind("The following argument", 0) != 0 || at == std::string::npos) return text;
  std::vector<std::string> extras;
  for (std::size_t i = at + lead.size(); i < text.size();) {
    const std::size_t sp = text.find(' ', i);
    extras.push_back(text.substr(i, sp == std::string::npos ? std::string::npos : sp - i));
    if (sp == std::string::npos) break;
    i = sp + 1;
  }
  std::vector<std::string> hints;
  for (const std::string& arg : extras) {
    if (arg.size() < 3 || arg.rfind("--", 0) != 0) continue;
    if (const std::string flag = closest_flag(app, arg); !flag.empty())
      hints.push_back(arg + ": did you mean " + flag + "?");
  }
  for (std::size_t i = 0; i < hints.size(); ++i) text += (i == 0 ? " (" : "; ") + hints[i];
  if (!hints.empty()) text += ")";
  return text;
}

}  // namespace ccbench
