// Renderers of a comparison (ccbench compare --format text|markdown|json). The JSON form is the
// verdict object (docs/verdict-format.md); `ccbench report` renders that JSON, never a Comparison,
// so src/report does not depend on src/compare.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare/compare.hpp"

namespace ccbench::compare {

std::string render_compare_text(const compare::Comparison& c);
std::string render_compare_markdown(const compare::Comparison& c);
nlohmann::json compare_to_json(const compare::Comparison& c);  // the verdict object, docs/verdict-format.md
std::string render_compare_json(const compare::Comparison& c);

namespace compare_cells {
// Cells shared by the text and markdown tables (one row per matched size).
std::vector<std::string> header(const compare::Comparison& c);
std::vector<std::vector<std::string>> body(const compare::Comparison& c);
// Summary lines ("geomean over 12 sizes: 1.176x [1.170, 1.182] ...").
std::vector<std::string> summary_lines(const compare::Comparison& c);
std::string verdict_line(const compare::Comparison& c);
std::string claim_line(const compare::Comparison& c);
std::string side_line(const compare::SideInfo& s);
std::string metric_line(const compare::Comparison& c);
}  // namespace compare_cells

}  // namespace ccbench::compare
