// `ccbench trace import FORMAT FILE... --out TRACE.json` and `ccbench trace show TRACE.json`: flags and
// printing only; the format, importers and summary are src/trace/ (docs/replay.md "Trace format").
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/output_folders.hpp"
#include "core/sizes.hpp"
#include "sweep/flag_suggestion.hpp"
#include "system/tool_version.hpp"
#include "trace/summary.hpp"
#include "trace/trace.hpp"
#include "trace/trace_import.hpp"

namespace {

using namespace ccbench;

std::string size_class(int k) {
  if (k < 0) return "0 B";
  const std::uint64_t low = std::uint64_t{1} << k;
  return fmt::format("[{}, {})", format_bytes(low), format_bytes(low * 2));
}

void print_summary(const trace::Trace& t, const std::string& path) {
  const std::string version = t.provenance.source_version.empty() ? "" : " (" + t.provenance.source_version + ")";
  std::printf("%s: %zu ranks, world %d, %zu groups, from %s%s\n", path.c_str(), t.ranks.size(), t.world_size,
              t.groups.size(), t.provenance.format.c_str(), version.c_str());
  for (const auto& g : t.groups)
    std::printf("  group %s: ranks %s%s\n", g.id.c_str(), fmt::format("{}", fmt::join(g.ranks, ",")).c_str(),
                g.members_from_source ? "" : " (members not in the source: taken as the world)");
  for (const auto& note : t.provenance.not_in_source) std::printf("  not in the source: %s\n", note.c_str());
  for (const auto& s : trace::summarise(t)) {
    std::uint64_t low = UINT64_MAX, high = 0;
    for (const auto& [rank, n] : s.calls_per_rank) low = std::min(low, n), high = std::max(high, n);
    const std::string title = s.step ? fmt::format("step {}", *s.step) : std::string("calls without a step marker");
    const std::string per_rank =
        low == high ? fmt::format("{} calls per rank", low) : fmt::format("{}-{} calls per rank", low, high);
    std::printf("\n%s: %s, %s sent in all\n", title.c_str(), per_rank.c_str(), format_bytes(s.bytes).c_str());
    std::printf("  %-16s %-20s %12s %14s\n", "op", "group", "calls", "bytes");
    for (const auto& [key, totals] : s.by_op_group)
      std::printf("  %-16s %-20s %12llu %14s\n", std::string(trace::name(key.first)).c_str(), key.second.c_str(),
                  static_cast<unsigned long long>(totals.calls), format_bytes(totals.bytes).c_str());
    std::printf("  size histogram (send buffer per call, over every rank):\n");
    for (const auto& [k, n] : s.size_histogram)
      std::printf("    %-24s %12llu\n", size_class(k).c_str(), static_cast<unsigned long long>(n));
    if (low != high)
      for (const auto& [rank, n] : s.calls_per_rank)
        std::printf("  rank %d: %llu calls\n", rank, static_cast<unsigned long long>(n));
  }
}

int trace_main(int argc, char** argv) {
  CLI::App app{"Import a job's traced collective calls into ccbench's trace format, or summarise a trace.",
               "ccbench trace"};
  app.require_subcommand(1);
  std::string format_name, out, show_path;
  std::vector<std::string> files;
  CLI::App* import = app.add_subcommand("import", "other tools' traces (one file per rank) -> TRACE.json");
  std::vector<std::string> formats;
  for (auto f : trace::import_format_names()) formats.emplace_back(f);
  import->add_option("FORMAT", format_name, fmt::format("{}", fmt::join(formats, "|")))
      ->required()
      ->check(CLI::IsMember(formats));
  import->add_option("FILE", files, "one file per rank (pytorch-et: execution graphs, and profiler traces to link)")
      ->required();
  import->add_option("--out", out, "trace file to write")->required();
  CLI::App* show = app.add_subcommand("show", "per step: calls per op and group, bytes, size histogram");
  show->add_option("TRACE", show_path, "a trace file")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ccbench trace: %s\n", ccbench::parse_error_text(app, e).c_str());
    return exit_code::usage;
  }
  try {
    if (show->parsed()) {
      print_summary(trace::load(show_path), show_path);
      return 0;
    }
    refuse_output_among_inputs(out, "--out", files);
    prepare_output_file(out, "--out");
    trace::ImportOptions options;
    options.tool_version = std::string(system::tool_version());
    const std::vector<std::filesystem::path> paths(files.begin(), files.end());
    const auto summary = trace::import_trace(*trace::parse_import_format(format_name), paths, out, options);
    for (const auto& note : summary.not_in_source)
      std::fprintf(stderr, "ccbench trace import: not in the source: %s\n", note.c_str());
    std::fprintf(stderr, "ccbench trace import: wrote %llu calls of %d ranks to %s\n",
                 static_cast<unsigned long long>(summary.calls), summary.ranks, out.c_str());
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ccbench trace: %s\n", e.what());
  } catch (const ParseError& e) {
    std::fprintf(stderr, "ccbench trace: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ccbench trace: error: %s\n", e.what());
  }
  return exit_code::usage;
}

const bool registered = ccbench::cli::register_command({"trace",
                                                        "import a job's collective calls (PyTorch execution graph or "
                                                        "profiler, NCCL log, NCCL Inspector) into a trace; show one",
                                                        &trace_main});

}  // namespace
