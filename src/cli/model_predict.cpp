// `ccbench model predict MODEL --op OP --bytes S --nodes N` (one call) and `ccbench model predict
// MODEL... --trace TRACE.json` (every call of a job's trace, model_predict_trace.cpp): docs/model.md.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/model_command.hpp"
#include "core/error.hpp"
#include "core/percentiles.hpp"
#include "core/result.hpp"
#include "core/sizes.hpp"
#include "core/types.hpp"
#include "model/model.hpp"
#include "sweep/flag_suggestion.hpp"

namespace ccbench::cli {

std::string format_time(double us) {
  const double magnitude = std::abs(us);  // a delta may be negative
  if (magnitude >= 1e6) return fmt::format("{:.3g} s", us / 1e6);
  if (magnitude >= 1e3) return fmt::format("{:.3g} ms", us / 1e3);
  return fmt::format("{:.3g} us", us);
}

namespace {

int predict_main(int argc, char** argv) {
  CLI::App app{
      "Predict a collective's time and bus bandwidth, with a 90% band, from a model file; or price every call "
      "of a job's trace (--trace) on instance profiles.",
      "ccbench model predict"};
  std::vector<std::string> model_paths;
  std::string op_text, bytes_text, format = "text";
  TracePredictFlags trace;
  model::PredictQuery q;
  // One MODEL for one call, as before --trace existed (so a stray word after it is named as not
  // expected); several only with --trace.
  const bool tracing = std::any_of(argv + 1, argv + argc, [](const char* arg) {
    const std::string_view a(arg);
    return a == "--trace" || a.starts_with("--trace=");
  });
  constexpr const char* kModelHelp =
      "model file (ccbench model fit); with --trace several (the first that measured the op on a profile prices it)";
  std::string one_model;
  if (tracing) {
    app.add_option("MODEL", model_paths, kModelHelp)->required();
  } else {
    app.add_option("MODEL", one_model, kModelHelp)->required();
  }
  app.add_option("--op", op_text, "collective (required without --trace)");
  app.add_option("--bytes,-b", bytes_text, "size S (nccl-tests convention), e.g. 1G (required without --trace)");
  auto* nodes =
      app.add_option("--nodes,-N", q.nodes, "node count (required without --trace)")->check(CLI::Range(1, 1 << 20));
  app.add_option("--ranks-per-node", q.ranks_per_node,
                 "ranks per node (default: as fitted); with --trace the job's, which places its ranks on nodes")
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--profile", q.profile, "instance type or fabric label (default: the model's only one)");
  app.add_option("--trace", trace.trace, "a job's trace (ccbench trace import): price every call of one step");
  app.add_option("--profiles", trace.profiles,
                 "with --trace: comma-separated profiles (default: every measured profile, plus --migrate's)");
  app.add_option("--migrate", trace.migrate,
                 "with --trace: FROM:TO, the change in the step's communication time with its 90% interval");
  app.add_option("--format", format, "text|json")->check(CLI::IsMember({"text", "json"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ccbench model predict: %s\n", ccbench::parse_error_text(app, e).c_str());
    return exit_code::usage;
  }
  if (tracing) {
    if (trace.trace.empty()) {
      std::fprintf(stderr, "ccbench model predict: --trace: give a trace file (ccbench trace import)\n");
      return exit_code::usage;
    }
    if (!op_text.empty() || !bytes_text.empty() || nodes->count() > 0 || !q.profile.empty()) {
      std::fprintf(stderr,
                   "ccbench model predict: --trace: prices the trace's own calls; --op, --bytes, --nodes and "
                   "--profile are for one call (profiles: --profiles)\n");
      return exit_code::usage;
    }
    trace.models = model_paths;
    trace.format = format;
    trace.ranks_per_node = q.ranks_per_node;
    return predict_trace(trace);
  }
  try {
    for (const auto& [flag, given] : {std::pair{"--op", !op_text.empty()}, std::pair{"--bytes", !bytes_text.empty()},
                                      std::pair{"--nodes", nodes->count() > 0}})
      if (!given) throw UsageError(fmt::format("{} is required (or price a trace with --trace)", flag));
    if (!trace.profiles.empty() || !trace.migrate.empty())
      throw UsageError("--profiles and --migrate are for --trace (one call: --profile)");
    const std::string& model_path = one_model;
    const auto op = parse_op(op_text);
    if (!op) throw UsageError(fmt::format("--op: unknown op '{}'", op_text));
    q.op = *op;
    q.bytes = parse_bytes(bytes_text);
    const model::Model m = model::Model::load(model_path);
    q.percentile = m.percentile();  // the answer is the statistic the model was fitted on
    const model::Prediction p = m.predict(q);
    if (format == "json") {
      const nlohmann::json j = {{"op", std::string(name(q.op))},
                                {"bytes", q.bytes},
                                {"nodes", q.nodes},
                                {"ranks_per_node", p.ranks_per_node},
                                {"profile", p.profile},
                                {"time_us", p.time_us},
                                {"time_lo_us", p.time_lo_us},
                                {"time_hi_us", p.time_hi_us},
                                {"busbw_gbps", p.busbw_gbps},
                                {"busbw_lo_gbps", p.busbw_lo_gbps},
                                {"busbw_hi_gbps", p.busbw_hi_gbps},
                                {"band", 0.9},
                                {"statistic", q.percentile > 0 ? percentiles::key(q.percentile) : "median"},
                                {"extrapolated", p.extrapolated},
                                {"from_spec", p.from_spec}};
      std::printf("%s\n", j.dump(1).c_str());
    } else {
      std::string marks;
      if (p.extrapolated) marks += "  extrapolated";
      if (p.from_spec) marks += "  from spec";
      if (q.percentile > 0) marks += fmt::format("  {} of per-iteration times", percentiles::key(q.percentile));
      std::printf("%s %s on %d nodes x %d ranks (%s): time %s [%s, %s], busbw %.3g GB/s [%.3g, %.3g] (90%% band)%s\n",
                  std::string(name(q.op)).c_str(), format_bytes(q.bytes).c_str(), q.nodes, p.ranks_per_node,
                  p.profile.c_str(), format_time(p.time_us).c_str(), format_time(p.time_lo_us).c_str(),
                  format_time(p.time_hi_us).c_str(), p.busbw_gbps, p.busbw_lo_gbps, p.busbw_hi_gbps, marks.c_str());
    }
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ccbench model predict: %s\n", e.what());
  } catch (const ParseError& e) {
    std::fprintf(stderr, "ccbench model predict: %s\n", e.what());
  }
  return exit_code::usage;
}

const bool registered = register_model_subcommand(
    {"predict", "time and busbw at a size and node count, with a 90% band; or every call of a trace", &predict_main});

}  // namespace
}  // namespace ccbench::cli
