// `ccbench report FILE... --format table|markdown|csv|html|prometheus|gbench --out PATH [--baseline FILE] [--model M]
// [--plan P]`
//
// Exit codes: 0 rendered; 2 usage or input error (a missing or malformed file, an unknown format, an
// unwritable --out), with a message naming the file or flag. A comparison overlaid with --baseline
// does not change the exit code: gating is `ccbench compare`'s job.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cli/command.hpp"
#include "compare/claim.hpp"
#include "compare/compare.hpp"
#include "compare/load.hpp"
#include "compare/render.hpp"
#include "core/error.hpp"
#include "core/output_folders.hpp"
#include "core/result.hpp"
#include "core/types.hpp"
#include "model/fit.hpp"
#include "model/model.hpp"
#include "report/plan_table.hpp"
#include "report/renderers.hpp"
#include "sweep/flag_suggestion.hpp"

namespace ccbench::cli {
namespace {

namespace fs = std::filesystem;

std::vector<ResultFile> load_all(const std::vector<std::string>& inputs) {
  std::vector<ResultFile> files;
  for (const auto& input : inputs) {
    // A file, or a folder's result files (the rules of `ccbench compare`).
    for (const auto& p : compare::expand_input(input)) files.push_back(load_result_file(p));
  }
  return files;
}

// The verdict of `ccbench compare BASELINE CANDIDATE [--claim FILE]` in its JSON form (docs/verdict-format.md).
nlohmann::json overlay_verdict(const std::vector<std::string>& baseline, const std::vector<std::string>& candidate,
                               const std::string& claim_file) {
  compare::CompareOptions options;
  options.baseline = baseline;
  options.candidate = candidate;
  if (!claim_file.empty()) options.claim = compare::load_claim_file(claim_file);
  return compare::compare_to_json(compare::compare_runs(options));
}

// `--model`: the model's curve for every (op, profile, nodes, ranks per node) the files measured, at
// the sizes they measured. A layout the model cannot answer is left out, with a warning.
std::vector<report::ModelCurve> model_curves(const std::string& model_file, const std::vector<ResultFile>& files) {
  const model::Model m = model::Model::load(model_file);
  std::vector<report::ModelCurve> curves;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const model::RunFacts facts = model::run_facts(files[f]);
    for (const auto& row : files[f].results) {
      const auto op = parse_op(row.op);
      // A matrix op's curve is against its most loaded rank's bytes, not the row's mean S the chart
      // is drawn on: no overlay shares that axis.
      if (!op || model::modelled_by_most_loaded_rank(*op)) continue;
      auto it = std::find_if(curves.begin(), curves.end(), [&](const report::ModelCurve& c) {
        return c.op == row.op && c.profile == facts.profile && c.nodes == facts.nodes &&
               c.ranks_per_node == facts.ranks_per_node;
      });
      if (it == curves.end()) {
        curves.push_back({row.op, facts.profile, facts.nodes, facts.ranks_per_node, false, model_file, {}, {}});
        it = std::prev(curves.end());
      }
      if (std::find(it->files.begin(), it->files.end(), f) == it->files.end()) it->files.push_back(f);
      if (std::none_of(it->points.begin(), it->points.end(),
                       [&](const report::ModelCurvePoint& p) { return p.bytes == row.bytes; })) {
        it->points.push_back({row.bytes, 0, 0, 0, 0, 0, 0, false});
      }
    }
  }
  std::vector<report::ModelCurve> out;
  for (auto& c : curves) {
    std::sort(c.points.begin(), c.points.end(),
              [](const report::ModelCurvePoint& a, const report::ModelCurvePoint& b) { return a.bytes < b.bytes; });
    try {
      for (auto& p : c.points) {
        const model::Prediction pr = m.predict({*parse_op(c.op), p.bytes, c.nodes, c.ranks_per_node, c.profile});
        p = {p.bytes,       pr.time_us,       pr.time_lo_us,    pr.time_hi_us,
             pr.busbw_gbps, pr.busbw_lo_gbps, pr.busbw_hi_gbps, pr.extrapolated};
        c.from_spec = c.from_spec || pr.from_spec;
      }
      out.push_back(std::move(c));
    } catch (const UsageError& e) {
      std::fprintf(stderr, "ccbench report: warning: --model %s: no curve for %s on %s, %d x %d: %s\n",
                   model_file.c_str(), c.op.c_str(), c.profile.c_str(), c.nodes, c.ranks_per_node, e.what());
    }
  }
  return out;
}

int report_main(int argc, char** argv) {
  CLI::App app{
      "Render result files as a text table, markdown, CSV, HTML with SVG charts, Prometheus metrics or "
      "Google Benchmark JSON.",
      "ccbench report"};
  std::vector<std::string> inputs;
  std::string format_text;
  std::string out;
  std::string baseline;
  std::string claim;
  std::string model_file, plan_file;
  app.add_option("files", inputs, "Result files (.json, .jsonl) or folders of them");
  app.add_option("--format", format_text,
                 "table, markdown, csv, html, prometheus or gbench (default: from --out's extension, else table)");
  app.add_option("-o,--out", out, "Output file (written atomically; default or '-': standard output)");
  app.add_option("--baseline", baseline,
                 "Result file or folder of the baseline: overlays `ccbench compare BASELINE FILES` (html, "
                 "markdown, table)");
  app.add_option("--model", model_file,
                 "Model file of `ccbench model fit`: its curve and 90% band over the measured points (html, markdown, "
                 "table)");
  app.add_option("--plan", plan_file,
                 "Plan of `ccbench model plan --format json`: its tables (html, markdown, table); alone, or after "
                 "the runs");
  app.add_option("--claim", claim,
                 "Claim file (configs/claims/*.yaml) the overlaid comparison tests; needs --baseline");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (std::string(e.what()).rfind("The following argument", 0) == 0) {
      std::fprintf(stderr, "ccbench report: %s\n", parse_error_text(app, e).c_str());
      return exit_code::usage;
    }
    const int rc = app.exit(e);
    return rc == 0 ? exit_code::ok : exit_code::usage;
  }

  try {
    std::optional<report::Format> format;
    if (!format_text.empty()) {
      format = report::parse_format(format_text);
      if (!format) {
        throw UsageError("--format " + format_text +
                         ": unknown format (expected table, markdown, csv, html, prometheus or gbench)");
      }
    } else if (!out.empty() && out != "-") {
      format = report::format_for_path(out);
    }
    if (!format) format = report::Format::table;
    const bool to_stdout = out.empty() || out == "-";
    if (!to_stdout) {
      std::vector<std::string> read = inputs;
      for (const std::string* other : {&baseline, &model_file, &plan_file, &claim}) read.push_back(*other);
      refuse_output_among_inputs(out, "--out", read);
      prepare_output_file(out, "--out");
    }

    if (inputs.empty() && plan_file.empty())
      throw UsageError("files: at least one result file (or --plan) is required");
    if ((!plan_file.empty() || !model_file.empty()) && *format != report::Format::table &&
        *format != report::Format::markdown && *format != report::Format::html) {
      throw UsageError(std::string(!plan_file.empty() ? "--plan" : "--model") +
                       ": only with --format html, markdown or table");
    }
    if (!model_file.empty() && inputs.empty())
      throw UsageError("--model " + model_file + ": needs result files to draw over");

    report::ReportInput input;
    if (!baseline.empty()) {
      input.files = load_all({baseline});
      input.baseline_files = input.files.size();
      input.input_names.push_back(baseline);
      input.input_files.push_back(input.files.size());
    }
    for (const auto& name : inputs) {
      const std::size_t before = input.files.size();
      for (auto& f : load_all({name})) input.files.push_back(std::move(f));
      input.input_names.push_back(name);
      input.input_files.push_back(input.files.size() - before);
    }
    if (!claim.empty() && baseline.empty()) throw UsageError("--claim " + claim + ": needs --baseline");
    if (!baseline.empty()) input.verdict = overlay_verdict({baseline}, inputs, claim);
    input.generated_at = utc_timestamp_now();
    if (!model_file.empty()) input.model_curves = model_curves(model_file, input.files);
    if (!plan_file.empty()) input.plan = report::load_plan_document(plan_file);

    // A plan alone is its own document.
    const std::string text = !input.files.empty()                  ? report::render(*format, input)
                             : *format == report::Format::html     ? report::plan_html_page(*input.plan)
                             : *format == report::Format::markdown ? report::plan_markdown(*input.plan)
                                                                   : report::plan_text(*input.plan);
    if (to_stdout) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    } else {
      try {
        write_file_atomically(out, text);
      } catch (const std::system_error& e) {
        throw UsageError("--out " + out + ": cannot write (" + e.code().message() + ")");
      }
      std::fprintf(stderr, "ccbench report: wrote %s (%s, %zu file%s)\n", out.c_str(),
                   std::string(report::name(*format)).c_str(), input.files.size(), input.files.size() == 1 ? "" : "s");
    }
    return exit_code::ok;
  } catch (const ParseError& e) {
    std::fprintf(stderr, "ccbench report: %s\n", e.what());
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ccbench report: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ccbench report: %s\n", e.what());
  }
  return exit_code::usage;
}

const bool registered =
    register_command({"report", "render result files: table, markdown, csv, html, prometheus, gbench", &report_main});

}  // namespace
}  // namespace ccbench::cli
