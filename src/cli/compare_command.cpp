// `ccbench compare BASE CAND`: verdicts on claims and regressions (docs/verdict-format.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/number_flags.hpp"
#include "compare/claim.hpp"
#include "compare/compare.hpp"
#include "compare/render.hpp"
#include "core/comma_list.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/output_folders.hpp"
#include "core/percentiles.hpp"
#include "core/result.hpp"
#include "core/sizes.hpp"
#include "core/types.hpp"
#include "sweep/flag_suggestion.hpp"

namespace {

using namespace ccbench;
using namespace ccbench::compare;

// BASE and CAND: a path that exists is one input even when its name holds a comma; anything else
// is a comma-separated list, where "\," stands for a comma inside a name.
std::vector<std::string> split_inputs(const std::string& text) {
  std::error_code ec;
  if (!text.empty() && std::filesystem::exists(std::filesystem::path(text), ec)) return {text};
  std::vector<std::string> out;
  std::string piece;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == ',') {
      piece += ',';
      ++i;
    } else if (text[i] == ',') {
      if (!piece.empty()) out.push_back(piece);
      piece.clear();
    } else {
      piece += text[i];
    }
  }
  if (!piece.empty()) out.push_back(piece);
  return out;
}

int compare_main(int argc, char** argv) {
  CLI::App app{
      "Compare two sets of result files: a claim verdict, a regression gate, or a report.\n"
      "BASE and CAND are result files, folders of them, or comma-separated lists (\\, is a comma in a name;\n"
      "a path that exists is taken whole).",
      "ccbench compare"};
  std::string base, cand, claim_file, expect, tolerance = "5%", statistic, metric, ops, min_bytes, max_bytes;
  std::string normalize, gate, threshold = "5%", format = "text", out, looks = "sequential", spread = "moderated";
  std::vector<std::string> allow;
  std::uint64_t seed = 20250709;
  int resamples = 0, min_trials = 5;
  double alpha = 0.05;
  app.add_option("BASE", base, "baseline result files or folders")->required();
  app.add_option("CAND", cand, "candidate result files or folders")->required();
  app.add_option("--claim", claim_file, "claim file (configs/claims/*.yaml)");
  app.add_option("--expect-speedup", expect, "claimed speedup: 18%, 0.18 or 1.18x");
  app.add_option("--tolerance", tolerance, "equivalence margin around the claim (default 5%)");
  app.add_option("--statistic", statistic,
                 "geomean|max across sizes; step: the step row of two ccbench replay results of one trace; pNN "
                 "(p99, p99.9): each trial's percentile instead of its median");
  app.add_option("--metric", metric, "busbw|time");
  app.add_option("--ops", ops, "comma-separated ops to compare");
  app.add_option("--min-bytes", min_bytes, "smallest size to compare (K/M/G)");
  app.add_option("--max-bytes", max_bytes, "largest size to compare (K/M/G)");
  app.add_option("--normalize", normalize, "none|link_bandwidth (overrides the claim)");
  app.add_option("--gate", gate, "regression");
  app.add_option("--threshold", threshold, "slowdown a size must exceed to fail the gate (default 5%)");
  app.add_option("--alpha", alpha, "significance level (default 0.05)")
      ->check(cli::finite_number())
      ->check(CLI::Range(1e-6, 0.5));
  app.add_option("--allow-mismatch", allow, "must-match metadata key allowed to differ (repeatable)");
  app.add_option("--format", format, "text|markdown|json")->check(CLI::IsMember({"text", "markdown", "json"}));
  app.add_option("--out", out, "write the output here instead of stdout");
  app.add_option("--seed", seed, "seed of the launch resampling behind the max's simultaneous level");
  app.add_option("--resamples", resamples,
                 "max's simultaneous level: 0 (default) Bonferroni over the sizes; N: from N resampled launch sets "
                 "(narrower, but "
                 "under-covers at 5-20 launches a side, docs/compare.md)")
      ->check(CLI::Range(0, 10000000));
  app.add_option("--looks", looks,
                 "sequential: verdicts stay valid when asked again after adding launches (default); once: one look "
                 "at a launch count fixed in advance")
      ->check(CLI::IsMember({"once", "sequential"}));
  app.add_option("--spread", spread,
                 "the max's per-size bounds: moderated: each size's launch spread shrunk toward the sizes' shared "
                 "spread (default); per-size: each size's own")
      ->check(CLI::IsMember({"per-size", "moderated"}));
  app.add_option("--min-trials", min_trials, "trials per side for the table's trial unit and for claims (default 5)")
      ->check(CLI::Range(2, 1000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ccbench compare: %s\n", ccbench::parse_error_text(app, e).c_str());
    return exit_code::usage;
  }
  try {
    CompareOptions o;
    o.baseline = split_inputs(base);
    o.candidate = split_inputs(cand);
    o.seed = seed;
    o.resamples = resamples;
    o.min_trials = min_trials;
    o.alpha = alpha;
    o.looks = *parse_looks(looks);
    o.spread = *parse_spread(spread);
    for (const auto& a : allow) {
      for (const std::string_view k : split_commas(a))
        if (!k.empty()) o.allow_mismatch.insert(std::string(k));
    }
    if (!ops.empty()) {
      for (const std::string_view op : split_commas(ops)) {
        if (op.empty()) continue;
        if (!parse_op(op)) throw UsageError(fmt::format("--ops: unknown op '{}'", op));
        o.scope.ops.push_back(std::string(name(*parse_op(op))));
      }
    }
    if (!min_bytes.empty()) o.scope.min_bytes = parse_bytes(min_bytes);
    if (!max_bytes.empty()) o.scope.max_bytes = parse_bytes(max_bytes);
    if (o.scope.min_bytes > o.scope.max_bytes) throw UsageError("--min-bytes is larger than --max-bytes");
    if (!metric.empty()) o.metric = parse_metric(metric, "--metric");
    // pNN chooses the per-trial statistic; the one across sizes stays the claim's (or geomean).
    const std::optional<double> row_percentile = percentiles::parse_statistic(statistic);
    if (row_percentile) {
      o.row_percentile = row_percentile;
    } else if (!statistic.empty() && statistic.front() == 'p') {
      throw UsageError(
          fmt::format("--statistic: '{}' is not a percentile: pNN with NN strictly between 0 and 100 "
                      "(p50, p99, p99.9)",
                      statistic));
    } else if (!statistic.empty()) {
      o.statistic = parse_statistic(statistic, "--statistic");
    }
    if (o.statistic == Statistic::step && o.metric == Metric::busbw && !metric.empty())
      throw UsageError(
          "--metric busbw: the step row is a time (its bytes sum different calls' buffers); "
          "--statistic step compares time");
    if (!normalize.empty()) o.normalize = parse_normalize(normalize, "--normalize");
    if (!claim_file.empty() && !expect.empty()) throw UsageError("--claim and --expect-speedup exclude each other");
    if (!claim_file.empty()) {
      Claim c = load_claim_file(claim_file);
      if (!metric.empty()) c.metric = o.metric;
      if (!statistic.empty() && !row_percentile) c.statistic = o.statistic;
      if (app.count("--tolerance") > 0) c.tolerance = parse_fraction_or_ratio(tolerance, "--tolerance");
      o.claim = c;
    } else if (!expect.empty()) {
      Claim c;
      c.statement = fmt::format("{} speedup", expect);
      c.expected_speedup = parse_fraction_or_ratio(expect, "--expect-speedup");
      c.tolerance = parse_fraction_or_ratio(tolerance, "--tolerance");
      c.metric = o.metric;
      c.statistic = o.statistic;
      if (o.normalize) c.normalize = *o.normalize;
      o.claim = c;
    }
    if (o.claim && o.claim->tolerance < 0) throw UsageError("--tolerance: must not be negative");
    if (!gate.empty()) {
      if (gate != "regression") throw UsageError(fmt::format("--gate: unknown gate '{}' (regression)", gate));
      Gate g;
      g.threshold = parse_fraction_or_ratio(threshold, "--threshold");
      if (g.threshold < 0) throw UsageError("--threshold: must not be negative");
      g.alpha = alpha;
      o.gate = g;
    } else if (app.count("--threshold") > 0) {
      throw UsageError("--threshold needs --gate regression");
    }
    if (!out.empty()) {
      refuse_output_among_inputs(out, "--out", {base, cand, claim_file});
      prepare_output_file(out, "--out");
    }
    const Comparison c = compare_runs(o);
    const std::string text = format == "json"       ? compare::render_compare_json(c)
                             : format == "markdown" ? compare::render_compare_markdown(c)
                                                    : compare::render_compare_text(c);
    if (out.empty()) {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      write_file_atomically(out, text);
      std::fprintf(stderr, "%s\n", compare::compare_cells::verdict_line(c).c_str());
    }
    return compare::exit_code(c.verdict);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ccbench compare: %s\n", e.what());
  } catch (const ParseError& e) {
    std::fprintf(stderr, "ccbench compare: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ccbench compare: error: %s\n", e.what());
  }
  return exit_code::usage;
}

const bool registered = ccbench::cli::register_command(
    {"compare", "compare two sets of results: claim verdict, regression gate, report", &compare_main});

}  // namespace
