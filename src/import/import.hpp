// Parse stage for other tools' logs: nccl-tests (text table or its -J JSON) and OSU Micro-Benchmarks
// text -> a ccbench result file. Their numbers are summaries (a mean over iterations, and for
// nccl-tests over ranks), so rows are marked samples_kind "summary" and carry no CI.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace ccbench::importer {

struct ImportOptions {
  std::optional<std::string> op;  // when the log does not say which collective ran
  std::optional<int> ranks;       // when the log does not say (OSU never does)
  std::optional<int> nodes;       // when the log names no hosts (summary tables, published excerpts)
  std::string label;
  std::string instance_type;
  std::optional<double> link_gbps;
  std::string efa_generation;
  std::vector<std::string> command;  // recorded in run.command
  // The importing ccbench (tool.version, tool.git: the schema requires a version). The caller
  // fills them: import depends on core only, and the version lives in system/.
  std::string tool_version = "unknown";
  std::string tool_git;
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
// The same document as imported_to_json(file).dump(1) + "\n", built one row at a time: a large
// log's rows never become one JSON tree (that tree was ~12x the size of the text it printed).
std::string imported_text(const ResultFile& file);

// Largest byte count an imported row may carry (1 PiB); sizes beyond it are typos or overflow.
inline constexpr std::uint64_t kMaxImportBytes = std::uint64_t{1} << 50;

namespace import_detail {
// Shared by the importers.
std::string read_text(const std::filesystem::path& path);
std::vector<std::string> split_lines(const std::string& text);
std::vector<std::string> split_ws(const std::string& line);
// Removes launcher prefixes: Open MPI's "[1,0]<stdout>:" and similar.
std::string strip_launcher_prefix(const std::string& line);
// A whole number written as plain digits, at most `max`; nullopt for a sign, a fraction, an
// exponent, inf, nan or anything above `max` (casting such a double to an integer is UB).
std::optional<std::uint64_t> parse_whole(std::string_view token, std::uint64_t max);
// A line that is not UTF-8 (a Latin-1 byte): the first is named in a warning with its line, and
// the result file records the escaped text (core/utf8.hpp).
void note_non_utf8(std::string_view line, const std::string& file, std::size_t line_no,
                   std::vector<std::string>& warnings, bool& noted);
// nccl-tests binary or OSU title word -> our op name ("all_reduce_perf" -> "allreduce"); "" if unknown.
std::string op_from_tool_name(std::string name);
ResultFile skeleton(const std::string& source_tool, const std::filesystem::path& path, const ImportOptions& options);
// A summary row from one reported time; busbw from our formula.
ResultRow summary_row(const std::string& op, const std::string& dtype, const std::string& redop, bool in_place,
                      std::uint64_t bytes, std::uint64_t count, int ranks, int trial, double time_us);
}  // namespace import_detail

}  // namespace ccbench::importer
