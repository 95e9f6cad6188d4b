// `ccbench model plan MODEL... --workload FILE [--profiles A,B] [--migrate FROM:TO] [--against TRACE]
//                    [--format F] [--out PATH]`
//
// `--against TRACE.json` sets the plan's rows beside the trace's call sites (model/trace_price).
//
// Exit codes: 0 the plan was written (rows the model cannot price are listed as such); 2 usage or
// input error: a bad flag, a model, workload or trace file that does not parse (the message names
// the file and key), a --migrate profile that is not priced, an unwritable --out.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "cli/model_command.hpp"
#include "core/error.hpp"
#include "core/output_folders.hpp"
#include "core/result.hpp"
#include "core/sizes.hpp"
#include "model/model.hpp"
#include "model/plan.hpp"
#include "model/trace_price.hpp"
#include "model/workload.hpp"
#include "report/plan_table.hpp"
#include "sweep/flag_suggestion.hpp"
#include "trace/trace.hpp"

namespace ccbench::cli {
namespace {

std::string against_text(const std::vector<model::StepCollective>& plan, const std::vector<model::AgainstRow>& rows,
                         const model::TraceStep& traced) {
  std::string out = fmt::format("\nAgainst the trace {} ({} step{}; calls per step per rank):\n", traced.source,
                                traced.steps, traced.steps == 1 ? "" : "s");
  if (traced.calls_outside_steps > 0)
    out +=
        fmt::format("  {} calls outside the traced steps (no step marker) are left out\n", traced.calls_outside_steps);
  out += fmt::format("  {:>3} {:<15} {:>14} {:>6} {:>12}   {:<15} {:>14} {:>6} {:>12}   {}\n", "#", "plan op", "bytes",
                     "group", "calls", "trace op", "bytes", "group", "calls", "agreement");
  for (const auto& r : rows) {
    std::string left = fmt::format("{:>3} {:<15} {:>14} {:>6} {:>12}", "-", "", "", "", "");
    if (r.plan_row) {
      const model::StepCollective& c = plan[*r.plan_row];
      left = fmt::format("{:>3} {:<15} {:>14} {:>6} {:>12}", *r.plan_row + 1, model::name(c.op), format_bytes(c.bytes),
                         c.group, c.count);
    }
    std::string right = fmt::format("{:<15} {:>14} {:>6} {:>12}", "-", "", "", "");
    if (r.trace)
      right = fmt::format("{:<15} {:>14} {:>6} {:>12.4g}", r.trace->op, format_bytes(r.trace->bytes),
                          r.trace->group_size, r.trace->calls_per_step);
    out += fmt::format("  {}   {}   {}\n", left, right, model::name(r.agreement));
  }
  return out;
}

int plan_main(int argc, char** argv) {
  CLI::App app{
      "Price the collectives of one training step (a workload file) on instance profiles with fitted models, "
      "and the migration delta between two profiles.",
      "ccbench model plan"};
  std::vector<std::string> model_files;
  std::string workload_file, profiles_text, migrate_text, format = "text", out;
  app.add_option("MODEL", model_files,
                 "model files of `ccbench model fit` (the first that measured the op on a profile "
                 "prices it; else the first with the op, from the profile's spec)")
      ->required();
  app.add_option("--workload", workload_file, "workload file (configs/workloads/*.yaml)")->required();
  app.add_option("--profiles", profiles_text,
                 "comma-separated instance profiles to price (default: every measured profile, plus --migrate's)");
  app.add_option("--migrate", migrate_text,
                 "FROM:TO, e.g. p5en.48xlarge:p6-b300.48xlarge: the change in "
                 "communication time per step, with its 90% interval");
  std::string against_file;
  app.add_option("--against", against_file,
                 "a trace of the same job (ccbench trace import): which of the plan's rows it issues, and where "
                 "they differ (text and json)");
  app.add_option("--format", format, "text, markdown, html or json")
      ->check(CLI::IsMember({"text", "markdown", "html", "json"}));
  app.add_option("-o,--out", out, "output file (written atomically; default: standard output)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ccbench model plan: %s\n", ccbench::parse_error_text(app, e).c_str());
    return exit_code::usage;
  }
  return run_reporting_errors("ccbench model plan", [&] {
    std::optional<std::pair<std::string, std::string>> migration;
    if (!migrate_text.empty()) migration = model::parse_migrate(migrate_text);
    if (!out.empty() && out != "-") prepare_output_file(out, "--out");
    const model::Workload workload = model::load_workload(workload_file);
    std::vector<model::Model> models;
    for (const auto& f : model_files) models.push_back(model::Model::load(f));
    const auto profiles = model::profiles_to_price(models, profiles_text, migration);
    const model::Pricer price = model::first_measured(models);
    if (!against_file.empty() && format != "text" && format != "json")
      throw UsageError(fmt::format("--against: shown in the text and json formats only, not {}", format));
    const model::Plan plan = model::make_plan(workload, profiles, price, migration);
    nlohmann::json doc = model::to_json(plan);
    std::string against;
    if (!against_file.empty()) {
      // The trace's ranks placed on nodes as the workload places its own.
      const model::TraceStep traced =
          model::trace_step(trace::load(against_file), workload.ranks_per_node, against_file);
      const auto rows = model::against(plan.step, traced);
      doc["against"] = model::against_json(rows, traced);
      against = against_text(plan.step, rows, traced);
    }
    std::string text;
    if (format == "json") {
      text = doc.dump(1) + "\n";
    } else if (format == "markdown") {
      text = report::plan_markdown(doc);
    } else if (format == "html") {
      text = report::plan_html_page(doc);
    } else {
      text = report::plan_text(doc) + against;
    }
    if (out.empty() || out == "-") {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      try {
        write_file_atomically(out, text);
      } catch (const std::system_error& e) {
        throw UsageError(fmt::format("--out {}: cannot write ({})", out, e.code().message()));
      }
      std::fprintf(stderr, "ccbench model plan: wrote %s (%s)\n", out.c_str(), format.c_str());
    }
    return exit_code::ok;
  });
}

const bool registered = register_model_subcommand(
    {"plan", "price one training step's collectives on instance profiles, and a migration's delta", &plan_main});

}  // namespace
}  // namespace ccbench::cli
