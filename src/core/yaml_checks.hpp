// Checks yaml-cpp does not make on the small YAML files users write (claims, sweep configs).
// Header-only: core does not link yaml-cpp; the loaders that include this do.
//
// - A key given twice in one map: yaml-cpp keeps both and a lookup silently takes one of them.
// - A quoted string that is never closed: at the end of a file yaml-cpp closes it at EOF and the
//   value swallows every line after the quote.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace ccbench::yaml_checks {

// 1-based line of a node, 0 when unknown.
inline int line_of(const YAML::Node& node) { return node.Mark().line >= 0 ? node.Mark().line + 1 : 0; }

// "<file>:<line>: <what>" (or "<file>: <what>" without a line).
inline std::string where(const std::string& file, int line) {
  return line > 0 ? file + ":" + std::to_string(line) : file;
}

// The error text of a YAML::Exception from YAML::Load on text in memory. yaml-cpp says "bad file"
// when its recursion limit stops a deeply nested document.
inline std::string describe(const YAML::Exception& e) {
  if (e.msg == "bad file") return "nesting too deep";
  return e.msg;
}

namespace detail {

// True when the quoted scalar starting at text[pos] (a ' or ") is closed before the end of `text`.
inline bool quote_closed(std::string_view text, std::size_t pos) {
  if (pos >= text.size()) return true;
  const char q = text[pos];
  if (q != '"' && q != '\'') return true;  // not where we expected a quote: nothing to say
  for (std::size_t i = pos + 1; i < text.size(); ++i) {
    if (q == '"' && text[i] == '\\') {
      ++i;
      continue;
    }
    if (text[i] == q) {
      if (q == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;  // '' is an escaped quote in a single-quoted scalar
        continue;
      }
      return true;
    }
  }
  return false;
}

}  // namespace detail

// More nodes than any claim or sweep config holds (they have tens). Aliases make a DAG that a walk
// expands: a 389-byte file of 9 levels of 10 aliases is 10^9 nodes to visit; the walk stops here.
inline constexpr std::size_t kMaxExpandedNodes = 100000;

namespace detail {

inline void check_node(const std::string& file, std::string_view text, const YAML::Node& node, std::size_t& visited) {
  if (++visited > kMaxExpandedNodes) {
    throw ParseError(file + ": more than " + std::to_string(kMaxExpandedNodes) +
                     " YAML nodes once aliases (*name) are expanded; a claim or config has far fewer");
  }
  if (node.IsScalar()) {
    if (node.Tag() == "!" && node.Mark().pos >= 0 && !quote_closed(text, static_cast<std::size_t>(node.Mark().pos))) {
      throw ParseError(where(file, line_of(node)) + ": unterminated quoted string");
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) check_node(file, text, item, visited);
  } else if (node.IsMap()) {
    std::map<std::string, int> seen;
    for (const auto& entry : node) {
      check_node(file, text, entry.first, visited);
      if (entry.first.IsScalar()) {
        const auto [it, fresh] = seen.emplace(entry.first.Scalar(), line_of(entry.first));
        if (!fresh) {
          throw ParseError(where(file, line_of(entry.first)) + ": key '" + entry.first.Scalar() +
                           "' given twice (first on line " + std::to_string(it->second) + ")");
        }
      }
      check_node(file, text, entry.second, visited);
    }
  }
}

}  // namespace detail

// Throws ParseError "<file>:<line>: ..." for a repeated key or an unterminated quoted string
// anywhere under `node`, and "<file>: more than ... nodes" for a document whose aliases expand
// past kMaxExpandedNodes. `text` is the document `node` was loaded from. Depth is bounded by
// yaml-cpp's own recursion limit at load time.
inline void check_document(const std::string& file, std::string_view text, const YAML::Node& node) {
  std::size_t visited = 0;
  detail::check_node(file, text, node, visited);
}

}  // namespace ccbench::yaml_checks
