// The result file model (schema_version 1, docs/result-format.md) and its JSON form.
//
// Rows keep op/dtype/redop as strings: a result file is data from another machine and maybe another
// ccbench version, and the comparator must load rows it cannot measure itself (imported nccl-tests
// logs, future ops). Metadata sections stay JSON objects because their keys are open-ended.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ccbench {

inline constexpr int kSchemaVersion = 1;
inline constexpr std::int64_t kMaxRanks = std::int64_t{1} << 24;  // the largest rank count a file may give
// The shortest time a row may hold, microseconds (a picosecond): below it a time is no measurement,
// and its reciprocal (a bandwidth, a ratio) overflows.
inline constexpr double kMinTimeUs = 1e-6;

struct TimeSummaryUs {
  double min = 0, median = 0, mean = 0, p99 = 0, max = 0;
  double ci95_lo = 0, ci95_hi = 0;
};

struct ResultRow {
  std::string op;
  std::string backend;
  std::string dtype;
  std::string redop = "none";
  bool in_place = false;
  int root = -1;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  int ranks = 0;
  int trial = 0;
  std::vector<double> samples_us;
  int batch = 1;
  // "raw": one entry per measured iteration (or batch). "summary": imported from a tool that only
  // printed aggregates (nccl-tests, OSU); samples_us then holds those and no CI can be derived.
  std::string samples_kind = "raw";
  TimeSummaryUs time_us;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::uint64_t wrong = 0;
  bool ci_target_met = false;
  nlohmann::json extra = nlohmann::json::object();  // backend-specific fields, kept on round trip
};

struct RunInfo {
  std::string status = "incomplete";  // complete | incomplete | interrupted | failed
  std::string started_at;
  std::string finished_at;
  std::vector<std::string> command;
  std::string label;
  int exit_code = 0;
  std::optional<std::string> error;
  std::uint64_t peak_rss_bytes = 0;  // the largest peak resident set of any rank (0: not measured)
};

struct ResultFile {
  int schema_version = kSchemaVersion;
  nlohmann::json tool = nlohmann::json::object();
  RunInfo run;
  nlohmann::json system = nlohmann::json::object();
  nlohmann::json fabric = nlohmann::json::object();
  nlohmann::json software = nlohmann::json::object();
  nlohmann::json environment = nlohmann::json::object();
  nlohmann::json config = nlohmann::json::object();
  std::vector<ResultRow> results;
  std::string source;  // where it was loaded from (not serialised)
};

nlohmann::json to_json(const ResultRow& row);
nlohmann::json to_json(const ResultFile& file);

// Parse with validation; errors throw ParseError naming `where` (a file) and the JSON path, e.g.
// "runs/a.json: /results/3/time_us/median: must be a positive number".
ResultRow row_from_json(const nlohmann::json& j, const std::string& where, const std::string& json_path);
ResultFile file_from_json(const nlohmann::json& j, const std::string& where);

// Loads a result file. When its status is not "complete" and the JSON-lines stream beside it
// (out.json -> out.jsonl) holds more rows, those rows are used: they are what survived a crash.
// A bare .jsonl file loads too, with empty metadata.
ResultFile load_result_file(const std::filesystem::path& path);

std::filesystem::path jsonl_path_for(const std::filesystem::path& json_path);

// Writes via a temporary file in the same directory and rename(2), so readers never see half a file.
// `durable` also fsyncs before the rename (survives a node crash); an emergency write while the
// launcher is about to kill the process skips it to finish sooner.
void write_file_atomically(const std::filesystem::path& path, const std::string& text, bool durable = true);

// ISO 8601 UTC timestamp with milliseconds, e.g. 2026-11-30T10:49:37.123Z.
std::string utc_timestamp_now();

}  // namespace ccbench
