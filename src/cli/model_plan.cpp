// `ccbench model plan MODEL... --workload FILE [--profiles A,B] [--migrate FROM:TO] [--format F] [--out PATH]`
//
// Exit codes: 0 the plan was written (rows the model cannot price are listed as such); 2 usage or
// input error: a bad flag, a model or workload file that does not parse (the message names the file
// and key), a --migrate profile that is not priced, an unwritable --out.
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
#include "model/model.hpp"
#include "model/plan.hpp"
#include "model/workload.hpp"
#include "report/plan_table.hpp"
#include "sweep/flag_suggestion.hpp"

namespace ccbench::cli {
namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
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
                 "model files of `ccbench model fit` (the first that measured a profile "
                 "prices it; profiles none measured are priced from their spec)")
      ->required();
  app.add_option("--workload", workload_file, "workload file (configs/workloads/*.yaml)")->required();
  app.add_option("--profiles", profiles_text,
                 "comma-separated instance profiles to price (default: every measured profile, plus --migrate's)");
  app.add_option("--migrate", migrate_text,
                 "FROM:TO, e.g. p5en.48xlarge:p6-b300.48xlarge: the change in "
                 "communication time per step, with its 90% interval");
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
    if (!migrate_text.empty()) {
      const auto colon = migrate_text.find(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == migrate_text.size()) {
        throw UsageError(fmt::format("--migrate {}: expected FROM:TO (two profiles)", migrate_text));
      }
      migration = std::pair{migrate_text.substr(0, colon), migrate_text.substr(colon + 1)};
    }
    if (!out.empty() && out != "-") prepare_output_file(out, "--out");
    const model::Workload workload = model::load_workload(workload_file);
    std::vector<model::Model> models;
    for (const auto& f : model_files) models.push_back(model::Model::load(f));

    std::vector<std::string> profiles = split_list(profiles_text);
    if (profiles.empty()) {
      std::set<std::string> seen;
      for (const auto& m : models) {
        for (const auto& p : m.profiles()) {
          if (seen.insert(p).second) profiles.push_back(p);
        }
      }
    }
    if (migration) {
      for (const auto& p : {migration->first, migration->second}) {
        if (std::find(profiles.begin(), profiles.end(), p) == profiles.end()) profiles.push_back(p);
      }
    }
    if (profiles.empty()) throw UsageError("no profile to price: the models list none; name them with --profiles");

    // The first model that measured a profile answers for it; otherwise the first model (from spec).
    const model::Pricer price = [&models](const model::PredictQuery& q) {
      for (const auto& m : models) {
        const auto ps = m.profiles();
        if (std::find(ps.begin(), ps.end(), q.profile) != ps.end()) return m.predict(q);
      }
      return models.front().predict(q);
    };
    const model::Plan plan = model::make_plan(workload, profiles, price, migration);
    const nlohmann::json doc = model::to_json(plan);
    std::string text;
    if (format == "json") {
      text = doc.dump(1) + "\n";
    } else if (format == "markdown") {
      text = report::plan_markdown(doc);
    } else if (format == "html") {
      text = report::plan_html_page(doc);
    } else {
      text = report::plan_text(doc);
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
