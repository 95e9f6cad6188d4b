// Parse stage for other tools' logs: nccl-tests (text table or its -J JSON) and OSU Micro-Benchmarks
// text -> a ccbench result file. Their numbers are summaries (a mean over iterations, and for
// nccl-tests over ranks), so rows are marked samples_kind "summary" and carry no CI.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace ccbench::importer {

struct ImportOptions {
  std::optional<std::string> op;  // when the log does not say which collective ran
  std::optional<int> ranks;       // when the log does not say (OSU never does)
  std::string label;
  std::string instance_type;
  std::optional<double> link_gbps;
  std::string efa_generation;
  std::vector<std::string> command;  // recorded in run.command
};

struct Imported {
  ResultFile file;
  std::vector<std::string> warnings;
};

// Throw ParseError naming the file and line (text) or JSON path (nccl-tests -J).
Imported import_nccl_tests(const std::filesystem::path& path, const ImportOptions& options);
Imported import_osu(const std::filesystem::path& path, const ImportOptions& options);

// The result file's JSON, with time_us.ci95 null on summary rows (a CI there would look real).
nlohmann::json imported_to_json(const ResultFile& file);

namespace import_detail {
// Shared by the importers.
std::string read_text(const std::filesystem::path& path);
std::vector<std::string> split_lines(const std::string& text);
std::vector<std::string> split_ws(const std::string& line);
// Removes launcher prefixes: Open MPI's "[1,0]<stdout>:" and similar.
std::string strip_launcher_prefix(const std::string& line);
// nccl-tests binary or OSU title word -> our op name ("all_reduce_perf" -> "allreduce"); "" if unknown.
std::string op_from_tool_name(std::string name);
ResultFile skeleton(const std::string& source_tool, const std::filesystem::path& path, const ImportOptions& options);
// A summary row from one reported time; busbw from our formula.
ResultRow summary_row(const std::string& op, const std::string& dtype, const std::string& redop, bool in_place,
                      std::uint64_t bytes, std::uint64_t count, int ranks, int trial, double time_us);
}  // namespace import_detail

}  // namespace ccbench::importer
