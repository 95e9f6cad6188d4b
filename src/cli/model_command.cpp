// `ccbench model fit RESULTS... -o model.json` and the `ccbench model` dispatcher (docs/model.md);
// predict is in model_predict.cpp, plan in model_plan.cpp.
#include "cli/model_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "cli/command.hpp"
#include "compare/load.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/output_folders.hpp"
#include "core/percentiles.hpp"
#include "core/result.hpp"
#include "core/types.hpp"
#include "model/fit.hpp"
#include "model/model.hpp"
#include "sweep/flag_suggestion.hpp"

namespace ccbench::cli {

namespace {
std::vector<ModelSubcommand>& model_registry() {
  static std::vector<ModelSubcommand> table;
  return table;
}
}  // namespace

bool register_model_subcommand(const ModelSubcommand& sub) {
  model_registry().push_back(sub);
  return true;
}
const std::vector<ModelSubcommand>& model_subcommands() { return model_registry(); }

int run_reporting_errors(const char* program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const ParseError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
  }
  return exit_code::usage;
}

}  // namespace ccbench::cli

namespace {

using namespace ccbench;

std::string pct(double log_error) {
  if (log_error < 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * (std::exp(log_error) - 1.0));
}

// An input that is neither a folder nor a regular file, named with the reason (a FIFO would block).
void check_inputs(const std::vector<std::string>& inputs) {
  for (const auto& in : inputs) {
    std::error_code ec;
    if (std::filesystem::is_directory(in, ec)) continue;
    require_regular_file(in);
  }
}

int fit_main(int argc, char** argv) {
  CLI::App app{"Fit time against bytes and node count from result files (ccbench runs, imported nccl-tests logs).",
               "ccbench model fit"};
  std::vector<std::string> inputs;
  std::string out;
  model::FitOptions options;
  bool no_cv = false;
  app.add_option("RESULTS", inputs, "result files or folders of them")->required();
  app.add_option("-o,--out", out, "model file to write")->required();
  app.add_option("--refits", options.refits, "refits over resampled trials for the bands (default 200)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--max-regimes", options.max_regimes, "most regimes the information criterion may choose (default 3)")
      ->check(CLI::Range(1, 3));
  app.add_option("--seed", options.seed, "seed of the resampling");
  app.add_flag("--no-cross-validation", no_cv, "skip the cross-validated error (faster; the file records -1)");
  std::string percentile_text;
  app.add_option("--percentile", percentile_text,
                 "fit a percentile of per-iteration times (e.g. 99: the rows' percentiles_us p99 of "
                 "`ccbench run --percentiles 99`) instead of the median; the model then answers that statistic only");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ccbench model fit: %s\n", ccbench::parse_error_text(app, e).c_str());
    return exit_code::usage;
  }
  options.cross_validate = !no_cv;
  try {
    if (!percentile_text.empty()) {
      const std::vector<double> levels = percentiles::parse_list(percentile_text, "--percentile");
      if (levels.size() != 1) throw UsageError(fmt::format("--percentile {}: one level, e.g. 99", percentile_text));
      options.percentile = levels.front();
    }
    refuse_output_among_inputs(out, "-o", inputs);
    prepare_output_file(out, "-o");  // before fitting: a fit that cannot be saved is not started
    check_inputs(inputs);
    const compare::Side side = compare::load_side("inputs", inputs);
    std::vector<model::Observation> rows;
    for (const auto& f : side.files) {
      auto obs = model::observations(f, options.percentile);
      rows.insert(rows.end(), obs.begin(), obs.end());
    }
    if (rows.empty() && options.percentile > 0)
      throw UsageError(
          fmt::format("--percentile {}: no collective row of the inputs holds percentiles_us {} (measure "
                      "with `ccbench run --percentiles {}`)",
                      percentile_text, percentiles::key(options.percentile), percentile_text));
    const model::Model m = model::fit(rows, options, inputs);
    try {
      write_file_atomically(out, m.to_json().dump(1) + "\n");
    } catch (const std::system_error& e) {
      throw UsageError(fmt::format("-o {}: the fit is not saved: {} ({})", out, e.what(), e.code().message()));
    }
    std::fprintf(stderr, "ccbench model fit: %zu rows from %zu files -> %s\n", rows.size(), side.files.size(),
                 out.c_str());
    std::printf("%-15s %-22s %-10s %-12s %-8s %-9s %-12s %-12s\n", "op", "profile", "ranks/node", "nodes", "regimes",
                "residual", "cv-node-out", "cv-sizes-out");
    for (const auto& g : m.groups()) {
      std::printf("%-15s %-22s %-10d %-12s %-8d %-9s %-12s %-12s\n", std::string(name(g.op)).c_str(), g.profile.c_str(),
                  g.ranks_per_node, fmt::format("{}", fmt::join(g.nodes_fitted, ",")).c_str(), g.regimes,
                  pct(g.residual_rms_log).c_str(), pct(g.cv_node_rms_log).c_str(), pct(g.cv_sizes_rms_log).c_str());
    }
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ccbench model fit: %s\n", e.what());
  } catch (const ParseError& e) {
    std::fprintf(stderr, "ccbench model fit: %s\n", e.what());
  }
  return exit_code::usage;
}

const bool registered_fit = cli::register_model_subcommand({"fit", "fit a model from result files", &fit_main});

void print_model_usage(std::FILE* out) {
  std::fprintf(out, "usage: ccbench model <subcommand> [options]\n\nsubcommands:\n");
  auto subs = cli::model_subcommands();
  std::ranges::sort(subs, {}, &cli::ModelSubcommand::name);
  for (const auto& s : subs)
    std::fprintf(out, "  %-8.*s %.*s\n", static_cast<int>(s.name.size()), s.name.data(),
                 static_cast<int>(s.summary.size()), s.summary.data());
}

int model_main(int argc, char** argv) {
  if (argc < 2) {
    print_model_usage(stderr);
    return exit_code::usage;
  }
  const std::string sub = argv[1];
  if (sub == "-h" || sub == "--help") {
    print_model_usage(stdout);
    return 0;
  }
  for (const auto& s : cli::model_subcommands()) {
    if (s.name == sub) {
      std::string program = "ccbench model " + sub;
      std::vector<char*> args(argv + 1, argv + argc);
      args[0] = program.data();
      args.push_back(nullptr);
      return s.main(static_cast<int>(args.size()) - 1, args.data());
    }
  }
  std::fprintf(stderr, "ccbench model: unknown subcommand '%s'\n\n", sub.c_str());
  print_model_usage(stderr);
  return exit_code::usage;
}

const bool registered =
    cli::register_command({"model", "capacity planning: fit a model from result files, predict at scale", &model_main});

}  // namespace
