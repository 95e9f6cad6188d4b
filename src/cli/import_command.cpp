// `ccbench import nccl-tests|osu FILE --out PATH`: other tools' logs -> a ccbench result file.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <set>
#include <string>

#include "cli/command.hpp"
#include "cli/number_flags.hpp"
#include "core/error.hpp"
#include "core/output_folders.hpp"
#include "core/result.hpp"
#include "core/types.hpp"
#include "import/import.hpp"
#include "sweep/flag_suggestion.hpp"
#include "system/tool_version.hpp"

namespace {

using namespace ccbench;

int import_main(int argc, char** argv) {
  CLI::App app{
      "Convert a nccl-tests log (text table or -J JSON) or OSU Micro-Benchmarks output into a result file.\n"
      "Imported rows are marked samples_kind \"summary\": compare warns that their CIs are unavailable.",
      "ccbench import"};
  std::string format, file, out, op, label, instance_type, generation;
  int ranks = 0, nodes = 0;
  double link_gbps = 0;
  app.add_option("FORMAT", format, "nccl-tests|osu")->required()->check(CLI::IsMember({"nccl-tests", "osu"}));
  app.add_option("FILE", file, "the log to import")->required();
  app.add_option("--out", out, "result file to write")->required();
  app.add_option("--op", op, "collective, when the log does not say");
  app.add_option("--ranks", ranks, "number of ranks, when the log does not say (OSU)")->check(CLI::Range(1, 1 << 24));
  app.add_option("--nodes", nodes, "number of nodes, when the log names no hosts")->check(CLI::Range(1, 1 << 20));
  app.add_option("--label", label, "run label");
  app.add_option("--instance-type", instance_type, "instance type of the machines that ran it");
  app.add_option("--link-gbps", link_gbps, "EFA bandwidth per node in Gbps (for link-normalised claims)")
      ->check(cli::finite_number())
      ->check(CLI::PositiveNumber);
  app.add_option("--efa-generation", generation, "EFA generation (v2, v3, v4)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ccbench import: %s\n", ccbench::parse_error_text(app, e).c_str());
    return exit_code::usage;
  }
  try {
    refuse_output_among_inputs(out, "--out", {file});
    prepare_output_file(out, "--out");
    importer::ImportOptions o;
    if (!op.empty()) {
      const auto parsed = parse_op(op);
      if (!parsed) throw UsageError(fmt::format("--op: unknown op '{}'", op));
      o.op = std::string(name(*parsed));
    }
    if (ranks > 0) o.ranks = ranks;
    if (nodes > 0) o.nodes = nodes;
    if (link_gbps > 0) o.link_gbps = link_gbps;
    o.label = label;
    o.tool_version = std::string(system::tool_version());
    o.tool_git = std::string(system::tool_git_commit());
    o.instance_type = instance_type;
    o.efa_generation = generation;
    o.command.assign(argv, argv + argc);
    o.command[0] = "ccbench import";
    const importer::Imported imported =
        format == "osu" ? importer::import_osu(file, o) : importer::import_nccl_tests(file, o);
    for (const auto& w : imported.warnings) std::fprintf(stderr, "ccbench import: warning: %s\n", w.c_str());
    write_file_atomically(out, importer::imported_text(imported.file));
    std::set<std::string> ops;
    for (const auto& r : imported.file.results) ops.insert(r.op);
    std::fprintf(stderr, "ccbench import: wrote %zu rows (%s, %d ranks) to %s\n", imported.file.results.size(),
                 fmt::format("{}", fmt::join(ops, ",")).c_str(),
                 imported.file.results.empty() ? 0 : imported.file.results.front().ranks, out.c_str());
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ccbench import: %s\n", e.what());
  } catch (const ParseError& e) {
    std::fprintf(stderr, "ccbench import: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ccbench import: error: %s\n", e.what());
  }
  return exit_code::usage;
}

const bool registered =
    ccbench::cli::register_command({"import", "convert nccl-tests or OSU logs into a result file", &import_main});

}  // namespace
