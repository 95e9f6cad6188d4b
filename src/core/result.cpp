#include "core/result.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <system_error>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_depth.hpp"
#include "core/utf8.hpp"

namespace ccbench {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& path, const std::string& what) {
  throw ParseError(where + ": " + (path.empty() ? "/" : path) + ": " + what);
}

const json& require(const json& j, const char* key, const std::string& where, const std::string& path) {
  if (!j.is_object()) fail(where, path, "must be an object");
  const auto it = j.find(key);
  if (it == j.end()) fail(where, path + "/" + key, "missing field");
  return *it;
}

std::string get_string(const json& j, const char* key, const std::string& where, const std::string& path) {
  const json& v = require(j, key, where, path);
  if (!v.is_string()) fail(where, path + "/" + key, "must be a string");
  return v.get<std::string>();
}

double get_number(const json& v, const std::string& where, const std::string& path, bool positive) {
  if (!v.is_number()) fail(where, path, "must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(where, path, "must be finite");
  if (positive ? !(d > 0.0) : d < 0.0)
    fail(where, path, positive ? "must be a positive number" : "must not be negative");
  return d;
}

std::uint64_t get_count(const json& j, const char* key, const std::string& where, const std::string& path) {
  const json& v = require(j, key, where, path);
  if (!v.is_number_integer() || (v.is_number_integer() && v.get<std::int64_t>() < 0 && !v.is_number_unsigned())) {
    fail(where, path + "/" + key, "must be a non-negative integer");
  }
  return v.get<std::uint64_t>();
}

// An integer field stored in an int: in [lo, hi], else an error naming the field (a cast would wrap
// 2^40 ranks to 0).
int get_int(const json& j, const char* key, const std::string& where, const std::string& path, std::int64_t lo,
            std::int64_t hi) {
  const json& v = require(j, key, where, path);
  bool in_range = false;
  if (v.is_number_unsigned()) {
    const std::uint64_t u = v.get<std::uint64_t>();
    in_range = u <= static_cast<std::uint64_t>(hi) && (lo <= 0 || u >= static_cast<std::uint64_t>(lo));
  } else if (v.is_number_integer()) {
    const std::int64_t i = v.get<std::int64_t>();
    in_range = i >= lo && i <= hi;
  }
  if (!in_range)
    fail(where, path + "/" + key, "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  return static_cast<int>(v.get<std::int64_t>());
}

// Optional typed fields: absent gives `fallback`; a value of the wrong type names its path (instead
// of nlohmann's "[json.exception.type_error.302] type must be string, but is number").
std::string opt_string(const json& j, const char* key, const std::string& fallback, const std::string& where,
                       const std::string& path) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_string()) fail(where, path + "/" + key, "must be a string");
  return it->get<std::string>();
}

bool opt_bool(const json& j, const char* key, bool fallback, const std::string& where, const std::string& path) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_boolean()) fail(where, path + "/" + key, "must be true or false");
  return it->get<bool>();
}

json summary_to_json(const TimeSummaryUs& t) {
  return {{"min", t.min}, {"median", t.median}, {"mean", t.mean},
          {"p99", t.p99}, {"max", t.max},       {"ci95", json::array({t.ci95_lo, t.ci95_hi})}};
}

}  // namespace

json to_json(const ResultRow& row) {
  json j = {
      {"op", row.op},
      {"backend", row.backend},
      {"dtype", row.dtype},
      {"redop", row.redop},
      {"in_place", row.in_place},
      {"root", row.root},
      {"bytes", row.bytes},
      {"count", row.count},
      {"ranks", row.ranks},
      {"trial", row.trial},
      {"samples_us", row.samples_us},
      {"batch", row.batch},
      {"samples_kind", row.samples_kind},
      {"time_us", summary_to_json(row.time_us)},
      {"algbw_gbps", row.algbw_gbps},
      {"busbw_gbps", row.busbw_gbps},
      {"wrong", row.wrong},
      {"ci_target_met", row.ci_target_met},
  };
  for (const auto& [key, value] : row.extra.items()) {
    if (!j.contains(key)) j[key] = value;
  }
  return j;
}

json to_json(const ResultFile& file) {
  json run = {
      {"status", file.run.status},
      {"started_at", file.run.started_at},
      {"finished_at", file.run.finished_at},
      {"command", file.run.command},
      {"label", file.run.label},
      {"exit_code", file.run.exit_code},
      {"error", file.run.error ? json(*file.run.error) : json(nullptr)},
  };
  if (file.run.peak_rss_bytes != 0) run["peak_rss_bytes"] = file.run.peak_rss_bytes;
  json results = json::array();
  for (const auto& row : file.results) results.push_back(to_json(row));
  json out = {
      {"schema_version", file.schema_version},
      {"tool", file.tool},
      {"run", run},
      {"system", file.system},
      {"fabric", file.fabric},
      {"software", file.software},
      {"environment", file.environment},
      {"config", file.config},
      {"results", results},
  };
  // Bytes that are not UTF-8 (an environment variable, a label, a path) cannot go into JSON as they
  // are: they are written as \xNN and the run says which fields were escaped.
  if (auto escaped = escape_invalid_utf8(out); !escaped.empty()) out["run"]["non_utf8_escaped"] = std::move(escaped);
  return out;
}

ResultRow row_from_json(const json& j, const std::string& where, const std::string& path) {
  if (!j.is_object()) fail(where, path, "must be an object");
  ResultRow row;
  row.op = get_string(j, "op", where, path);
  row.backend = opt_string(j, "backend", "", where, path);
  row.dtype = get_string(j, "dtype", where, path);
  row.redop = opt_string(j, "redop", "none", where, path);
  if (j.contains("in_place") && !j["in_place"].is_boolean()) fail(where, path + "/in_place", "must be true or false");
  row.in_place = j.value("in_place", false);
  if (j.contains("root") && j["root"].is_number_integer()) row.root = j["root"].get<int>();
  row.bytes = get_count(j, "bytes", where, path);
  if (row.bytes == 0) fail(where, path + "/bytes", "must be positive");
  row.count = j.contains("count") ? get_count(j, "count", where, path) : 0;
  row.ranks = get_int(j, "ranks", where, path, 1, kMaxRanks);
  row.trial = j.contains("trial") ? get_int(j, "trial", where, path, 0, INT32_MAX) : 0;
  row.batch = j.contains("batch") ? get_int(j, "batch", where, path, 0, INT32_MAX) : 1;
  row.samples_kind = opt_string(j, "samples_kind", "raw", where, path);
  if (row.samples_kind != "raw" && row.samples_kind != "summary") {
    fail(where, path + "/samples_kind", "must be \"raw\" or \"summary\"");
  }
  const json& samples = require(j, "samples_us", where, path);
  if (!samples.is_array()) fail(where, path + "/samples_us", "must be an array");
  row.samples_us.reserve(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const std::string spath = path + "/samples_us/" + std::to_string(i);
    const double v = get_number(samples[i], where, spath, false);
    if (!(v > 0.0)) fail(where, spath, "must be a positive time in microseconds");
    // No clock times below a picosecond; a denormal time (5e-324) made an infinite ratio in compare.
    if (v < kMinTimeUs) fail(where, spath, fmt::format("{:g} us is below a picosecond: not a measured time", v));
    row.samples_us.push_back(v);
  }
  const json& t = require(j, "time_us", where, path);
  const std::string tpath = path + "/time_us";
  row.time_us.median = get_number(require(t, "median", where, tpath), where, tpath + "/median", false);
  for (auto [key, field] : {std::pair{"min", &TimeSummaryUs::min}, std::pair{"mean", &TimeSummaryUs::mean},
                            std::pair{"p99", &TimeSummaryUs::p99}, std::pair{"max", &TimeSummaryUs::max}}) {
    if (t.contains(key) && !t[key].is_null()) row.time_us.*field = get_number(t[key], where, tpath + "/" + key, false);
  }
  if (t.contains("ci95") && !t["ci95"].is_null()) {
    const json& ci = t["ci95"];
    if (!ci.is_array() || ci.size() != 2) fail(where, tpath + "/ci95", "must be [lo, hi]");
    row.time_us.ci95_lo = get_number(ci[0], where, tpath + "/ci95/0", false);
    row.time_us.ci95_hi = get_number(ci[1], where, tpath + "/ci95/1", false);
  }
  row.algbw_gbps = j.contains("algbw_gbps") ? get_number(j["algbw_gbps"], where, path + "/algbw_gbps", false) : 0.0;
  row.busbw_gbps = j.contains("busbw_gbps") ? get_number(j["busbw_gbps"], where, path + "/busbw_gbps", false) : 0.0;
  row.wrong = j.contains("wrong") ? get_count(j, "wrong", where, path) : 0;
  row.ci_target_met = opt_bool(j, "ci_target_met", false, where, path);
  if (row.time_us.median > 0.0 && row.time_us.median < kMinTimeUs)
    fail(where, tpath + "/median",
         fmt::format("{:g} us is below a picosecond: not a measured time", row.time_us.median));
  if (row.samples_us.empty() && !(row.time_us.median > 0.0)) {
    fail(where, path, "no samples_us and no positive time_us/median");
  }
  static const char* kKnown[] = {"op",           "backend", "dtype",      "redop",      "in_place",   "root",
                                 "bytes",        "count",   "ranks",      "trial",      "samples_us", "batch",
                                 "samples_kind", "time_us", "algbw_gbps", "busbw_gbps", "wrong",      "ci_target_met"};
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* k : kKnown) known = known || key == k;
    if (!known) row.extra[key] = value;
  }
  return row;
}

ResultFile file_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, "", "a result file must be a JSON object");
  ResultFile file;
  file.source = where;
  const json& version = require(j, "schema_version", where, "");
  if (!version.is_number_integer()) fail(where, "/schema_version", "must be an integer");
  // Compared as the 64-bit integer it is: 4294967297 must not be read as 1.
  if (!(version.is_number_unsigned() ? version.get<std::uint64_t>() == kSchemaVersion
                                     : version.get<std::int64_t>() == kSchemaVersion)) {
    fail(where, "/schema_version",
         "unsupported schema version " + version.dump() + " (this ccbench reads " + std::to_string(kSchemaVersion) +
             ")");
  }
  file.schema_version = kSchemaVersion;
  auto object_or_empty = [&](const char* key) {
    if (!j.contains(key) || j[key].is_null()) return json::object();
    if (!j[key].is_object()) fail(where, std::string("/") + key, "must be an object");
    return j[key];
  };
  file.tool = object_or_empty("tool");
  file.system = object_or_empty("system");
  file.fabric = object_or_empty("fabric");
  file.software = object_or_empty("software");
  file.environment = object_or_empty("environment");
  file.config = object_or_empty("config");
  const json run = object_or_empty("run");
  file.run.status = opt_string(run, "status", "complete", where, "/run");
  if (file.run.status != "complete" && file.run.status != "incomplete" && file.run.status != "interrupted" &&
      file.run.status != "failed") {
    fail(where, "/run/status", "must be complete, incomplete, interrupted or failed");
  }
  file.run.started_at = opt_string(run, "started_at", "", where, "/run");
  file.run.finished_at = opt_string(run, "finished_at", "", where, "/run");
  if (run.contains("command") && run["command"].is_array()) {
    for (const auto& c : run["command"]) {
      if (c.is_string()) file.run.command.push_back(c.get<std::string>());
    }
  }
  file.run.label = opt_string(run, "label", "", where, "/run");
  file.run.exit_code = run.contains("exit_code") ? get_int(run, "exit_code", where, "/run", -1, 255) : 0;
  if (run.contains("error") && run["error"].is_string()) file.run.error = run["error"].get<std::string>();
  if (run.contains("peak_rss_bytes") && run["peak_rss_bytes"].is_number_unsigned()) {
    file.run.peak_rss_bytes = run["peak_rss_bytes"].get<std::uint64_t>();
  }
  const json& results = require(j, "results", where, "");
  if (!results.is_array()) fail(where, "/results", "must be an array");
  for (std::size_t i = 0; i < results.size(); ++i) {
    file.results.push_back(row_from_json(results[i], where, "/results/" + std::to_string(i)));
  }
  return file;
}

namespace {

std::vector<ResultRow> load_jsonl_rows(const std::filesystem::path& path, bool tolerate_torn_tail) {
  LineReader lines(path);
  std::vector<ResultRow> rows;
  std::string_view line;
  while (lines.next(line)) {
    const std::size_t line_no = lines.line_number();
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    check_json_depth(line, path.string(), line_no);
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      // A kill can tear the last line mid-write; everything before it is intact.
      std::string_view more;
      bool last = true;
      while (lines.next(more)) {
        if (more.find_first_not_of(" \t\r") != std::string_view::npos) {
          last = false;
          break;
        }
      }
      if (tolerate_torn_tail && last) break;
      throw ParseError(path.string() + ":" + std::to_string(line_no) + ": malformed JSON line");
    }
    rows.push_back(row_from_json(j, path.string() + ":" + std::to_string(line_no), ""));
  }
  return rows;
}

}  // namespace

ResultFile load_result_file(const std::filesystem::path& path) {
  std::error_code ec;
  require_regular_file(path);
  if (path.extension() == ".jsonl") {
    ResultFile file;
    file.source = path.string();
    file.run.status = "incomplete";
    file.results = load_jsonl_rows(path, true);
    return file;
  }
  const std::string text = read_input_file(path);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw ParseError(path.string() + ": empty file");
  check_json_depth(text, path.string());
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    // nlohmann reports a byte offset; turn it into a line number a person can open.
    const std::size_t offset = std::min<std::size_t>(e.byte, text.size());
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
    throw ParseError(path.string() + ":" + std::to_string(line) + ": malformed JSON (" +
                     (offset >= text.size() ? std::string("truncated file") : std::string(e.what())) + ")");
  } catch (const json::out_of_range& e) {
    // "number overflow parsing '1e999'" carries no offset: find the number's line.
    const std::string what = e.what();
    const auto q = what.find('\'');
    const auto q2 = q == std::string::npos ? q : what.find('\'', q + 1);
    std::string where = path.string();
    if (q2 != std::string::npos) {
      const auto at = text.find(what.substr(q + 1, q2 - q - 1));
      if (at != std::string::npos) {
        where +=
            ":" + std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
      }
    }
    const auto number = q2 == std::string::npos ? std::string() : what.substr(q, q2 - q + 1);
    throw ParseError(where + ": malformed JSON (number out of range" + (number.empty() ? "" : ": " + number) + ")");
  }
  ResultFile file = file_from_json(j, path.string());
  if (file.run.status != "complete") {
    const auto stream = jsonl_path_for(path);
    if (std::filesystem::is_regular_file(stream, ec)) {
      auto rows = load_jsonl_rows(stream, true);
      if (rows.size() > file.results.size()) file.results = std::move(rows);
    }
  }
  return file;
}

std::filesystem::path jsonl_path_for(const std::filesystem::path& json_path) {
  std::filesystem::path p = json_path;
  if (p.extension() == ".json") return p.replace_extension(".jsonl");
  return std::filesystem::path(p.string() + ".jsonl");
}

namespace {

// Writes `text` to an existing target that is not a regular file (a character device such as
// /dev/null or a terminal, a FIFO, /dev/stdout): a rename would replace the device node or the link
// with a plain file, so the bytes go straight to it.
void write_directly(const std::filesystem::path& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENXIO) throw std::system_error(err, std::generic_category(), path.string() + ": a FIFO with no reader");
    throw std::system_error(err, std::generic_category(), "cannot open " + path.string());
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // block on a full pipe rather than fail
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw std::system_error(err, std::generic_category(), "cannot write " + path.string());
    }
    written += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

// The file a chain of symlinks ends at (which may not exist yet: a dangling link names the file
// to create). Relative link targets are relative to the link's folder.
std::filesystem::path final_link_target(std::filesystem::path path) {
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    const std::filesystem::path target = std::filesystem::read_symlink(path);
    path = target.is_absolute() ? target : path.parent_path() / target;
  }
  throw std::system_error(ELOOP, std::generic_category(), "cannot write " + path.string());
}

}  // namespace

void write_file_atomically(const std::filesystem::path& requested, const std::string& text, bool durable) {
  std::filesystem::path path = requested;
  struct stat st {};
  if (::stat(requested.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      throw std::system_error(EISDIR, std::generic_category(), "cannot write " + requested.string());
    }
    if (!S_ISREG(st.st_mode)) {
      write_directly(requested, text);
      return;
    }
  }
  // A symlink is kept and its target replaced (atomically, in the target's folder).
  path = final_link_target(requested);
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string tmpl = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw std::system_error(errno, std::generic_category(), "cannot create a temporary file in " + dir.string());
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw std::system_error(err, std::generic_category(), "cannot write " + tmpl);
    }
    written += static_cast<std::size_t>(n);
  }
  if (durable) ::fsync(fd);
  ::fchmod(fd, 0644);
  ::close(fd);
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw std::system_error(err, std::generic_category(), "cannot rename to " + path.string());
  }
}

std::string utc_timestamp_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

}  // namespace ccbench
