// `ccbench report` renderers: result files in, one document out. One renderer per file in this folder.
//
// Renderers see result files (core/result.hpp) and, when a comparison is overlaid, the verdict in its
// documented JSON form (docs/verdict-format.md, what `ccbench compare --format json` prints). Taking the
// contract rather than compare's C++ types keeps the renderers independent of the comparator's insides.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "report/model_overlay.hpp"

namespace ccbench::report {

enum class Format { table, markdown, csv, html, prometheus, gbench };

std::optional<Format> parse_format(std::string_view text);
std::string_view name(Format format);
// The format an output path implies by its extension (.html, .md, .csv, .prom, ...), if any.
std::optional<Format> format_for_path(std::string_view path);

struct ReportInput {
  // In legend order. With a baseline, the baseline comes first.
  std::vector<ResultFile> files;
  // The verdict object of a comparison (docs/verdict-format.md) when one is overlaid.
  std::optional<nlohmann::json> verdict;
  // With a verdict: the first `baseline_files` files are its baseline side, the rest its candidate.
  std::size_t baseline_files = 0;
  // The inputs as given, in order, and how many of `files` each one holds (a folder of launches
  // holds several): the HTML charts draw an input of several files as one curve per series, the
  // median over its launches with their range shaded. Empty: every file is an input of its own.
  std::vector<std::string> input_names;
  std::vector<std::size_t> input_files;
  // Shown in headers; empty leaves it out (tests compare outputs byte for byte).
  std::string generated_at;
  // `--model`: a fitted model's curves over the measured points (html, markdown, table).
  std::vector<ModelCurve> model_curves;
  // `--plan`: a plan document of `ccbench model plan --format json` (html, markdown, table).
  std::optional<nlohmann::json> plan;
};

// nccl-tests-like text tables, one per op and run.
std::string render_table(const ReportInput& input);
// GitHub-flavoured markdown for CI comments: runs, verdict, one table per op with every run side by side.
std::string render_markdown(const ReportInput& input);
// One row per result row, RFC 4180 quoting, full precision.
std::string render_csv(const ReportInput& input);
// One self-contained page (no scripts, no network) with inline SVG charts.
std::string render_html(const ReportInput& input);
// Prometheus text exposition format (node_exporter textfile collector, pushgateway).
std::string render_prometheus(const ReportInput& input);
// Google Benchmark's JSON output format, readable by its tools/compare.py.
std::string render_gbench(const ReportInput& input);

std::string render(Format format, const ReportInput& input);

}  // namespace ccbench::report
