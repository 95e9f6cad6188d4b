// The plan of `ccbench model plan` (its JSON document, docs/model.md "Plan document") as text,
// markdown and HTML. Renderers read the documented JSON, not src/model's types, so src/report does
// not depend on the model.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace ccbench::report {

// Throws ParseError "WHERE: KEY: ..." when the document is not a plan this ccbench reads.
void check_plan_document(const nlohmann::json& plan, const std::string& where);
// Reads and checks a plan file (`report --plan`): a FIFO, a folder or a device is refused without
// blocking, nesting is bounded (core/json_depth.hpp), every error is a ParseError naming the file.
nlohmann::json load_plan_document(const std::filesystem::path& path);

std::string plan_text(const nlohmann::json& plan);
std::string plan_markdown(const nlohmann::json& plan);
// A <section> for a page that has its own <html>, <head> and styles (render_html), and a page of its own.
std::string plan_html_section(const nlohmann::json& plan);
std::string plan_html_page(const nlohmann::json& plan);

}  // namespace ccbench::report
