// OSU Micro-Benchmarks collective latency output (osu_allreduce, osu_allgather, osu_alltoall, ...):
//   # OSU MPI Allreduce Latency Test v7.4
//   # Datatype: MPI_FLOAT.
//   # Size       Avg Latency(us)   [Min Latency(us)   Max Latency(us)  Iterations]
//   4                       1.52 ...
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <map>
#include <regex>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/run_metadata.hpp"
#include "core/types.hpp"
#include "import/import.hpp"

namespace ccbench::importer {
namespace {

using namespace import_detail;

std::optional<double> number(const std::string& tok) {
  double v = 0;
  const auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (ec != std::errc() || p != tok.data() + tok.size()) return std::nullopt;
  return v;
}

std::string dtype_from_mpi(std::string t) {
  if (!t.empty() && t.back() == '.') t.pop_back();
  static const std::map<std::string, std::string> kMap = {
      {"MPI_CHAR", "int8"},     {"MPI_SIGNED_CHAR", "int8"}, {"MPI_UNSIGNED_CHAR", "uint8"}, {"MPI_INT", "int32"},
      {"MPI_FLOAT", "float"},   {"MPI_DOUBLE", "double"},    {"MPI_LONG", "int64"},          {"MPI_INT64_T", "int64"},
      {"MPI_INT32_T", "int32"}, {"MPI_INT8_T", "int8"}};
  auto it = kMap.find(t);
  return it == kMap.end() ? t : it->second;
}

}  // namespace

Imported import_osu(const std::filesystem::path& path, const ImportOptions& o) {
  const std::string file = path.string();
  LineReader reader(path);  // streamed: memory bounded by one line plus the rows
  Imported out;
  bool non_utf8 = false, any_line = false;
  out.file = skeleton("osu", path, o);
  ResultFile& f = out.file;
  std::string op = o.op.value_or("");
  std::string dtype = "float";
  std::optional<std::size_t> avg_col, min_col, max_col, iter_col;
  bool header = false;
  std::map<std::pair<std::string, std::uint64_t>, int> seen;
  static const std::regex kTitle(R"(^#\s*OSU\s+(.*?)\s+Latency Test(\s+v(\S+))?)");
  static const std::regex kDatatype(R"(^#\s*Datatype:\s*(\S+))");
  std::string_view raw;
  while (reader.next(raw)) {
    any_line = true;
    const std::size_t line_no = reader.line_number();
    note_non_utf8(raw, file, line_no, out.warnings, non_utf8);
    const std::string line = strip_launcher_prefix(std::string(raw));
    std::smatch m;
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    if (line[first] == '#') {
      if (std::regex_search(line, m, kTitle)) {
        if (m[3].matched) f.tool["source_version"] = m[3].str();
        if (!o.op) {
          // "MPI Allreduce", "MPI-CUDA Allgather", "MPI All-to-All Personalized Exchange": drop the
          // library word and map the rest.
          std::string words = m[1].str();
          const auto space = words.find(' ');
          const std::string rest = space == std::string::npos ? words : words.substr(space + 1);
          op = op_from_tool_name(rest);
          if (op.empty()) {
            throw ParseError(fmt::format("{}:{}: unsupported OSU test '{}' (pass --op for another collective)", file,
                                         line_no, words));
          }
        }
      } else if (std::regex_search(line, m, kDatatype)) {
        dtype = dtype_from_mpi(m[1].str());
      } else if (line.find("Size") != std::string::npos && line.find("Latency") != std::string::npos) {
        // Columns are separated by runs of spaces; names contain single spaces ("Avg Latency(us)").
        static const std::regex kSplit(R"(\s{2,})");
        std::string body = line.substr(line.find('#') + 1);
        std::vector<std::string> names;
        for (std::sregex_token_iterator it(body.begin(), body.end(), kSplit, -1), end; it != end; ++it) {
          std::string n = it->str();
          if (n.find_first_not_of(' ') == std::string::npos) continue;
          names.push_back(n.substr(n.find_first_not_of(' ')));
        }
        avg_col = min_col = max_col = iter_col = std::nullopt;
        for (std::size_t i = 0; i < names.size(); ++i) {
          const auto& n = names[i];
          if (n.starts_with("Min")) {
            min_col = i;
          } else if (n.starts_with("Max")) {
            max_col = i;
          } else if (n.starts_with("Iterations")) {
            iter_col = i;
          } else if ((n.starts_with("Avg") || n.starts_with("Latency")) && !avg_col) {
            avg_col = i;
          }
        }
        if (!avg_col) throw ParseError(fmt::format("{}:{}: no latency column in the header", file, line_no));
        header = true;
      }
      continue;
    }
    const auto toks = split_ws(line);
    if (toks.empty() || !number(toks[0]) || !header) continue;
    if (op.empty())
      throw ParseError(
          fmt::format("{}:{}: no '# OSU ... Latency Test' title before the data: pass --op", file, line_no));
    if (!o.ranks) {
      throw ParseError(fmt::format("{}: OSU output does not say how many ranks ran: pass --ranks N", file));
    }
    const std::size_t need = std::max({*avg_col, min_col.value_or(0), max_col.value_or(0), iter_col.value_or(0)}) + 1;
    if (toks.size() < need) {
      throw ParseError(fmt::format("{}:{}: truncated row ({} columns, expected {})", file, line_no, toks.size(), need));
    }
    const int ranks = *o.ranks;
    const bool total_over_ranks = op == "allgather" || op == "alltoall";
    // bytes = size x ranks for allgather/alltoall must stay in range too (2^63-1 wrapped to 0).
    const auto size =
        parse_whole(toks[0], total_over_ranks ? kMaxImportBytes / static_cast<std::uint64_t>(ranks) : kMaxImportBytes);
    if (!size || *size == 0) {
      throw ParseError(fmt::format("{}:{}: size '{}' must be a whole number of bytes from 1 to 2^50{}", file, line_no,
                                   toks[0], total_over_ranks ? " (times the rank count)" : ""));
    }
    auto time_at = [&](std::size_t col) {
      const auto v = number(toks[col]);
      if (!v || !std::isfinite(*v) || *v <= 0) {
        throw ParseError(
            fmt::format("{}:{}: latency '{}' must be a positive number of microseconds", file, line_no, toks[col]));
      }
      return *v;
    };
    const double avg = time_at(*avg_col);
    // OSU's size is per rank (allgather: each rank's contribution; alltoall: each peer's block);
    // ccbench follows nccl-tests, whose bytes is the total S.
    const std::uint64_t per_rank = *size;
    const std::uint64_t bytes = total_over_ranks ? per_rank * static_cast<std::uint64_t>(ranks) : per_rank;
    const auto dt = parse_dtype(dtype);
    const std::uint64_t elt = dt ? info(*dt).size_bytes : 1;
    const auto parsed_op = parse_op(op);
    const std::string redop = parsed_op && info(*parsed_op).is_reduction ? "sum" : "none";
    ResultRow row = summary_row(op, dtype, redop, false, bytes, per_rank / elt, ranks, seen[{op, bytes}]++, avg);
    row.backend = "mpi";
    if (min_col) row.time_us.min = time_at(*min_col);
    if (max_col) row.time_us.max = time_at(*max_col);
    if (iter_col) {
      const auto it = parse_whole(toks[*iter_col], std::uint64_t{1} << 53);
      if (!it) {
        throw ParseError(fmt::format("{}:{}: iterations '{}' must be a whole number", file, line_no, toks[*iter_col]));
      }
      row.extra["osu_iterations"] = *it;
    }
    row.extra["osu_size"] = per_rank;
    f.results.push_back(std::move(row));
  }
  if (!any_line) throw ParseError(file + ": empty file");
  if (f.results.empty()) throw ParseError(fmt::format("{}: no OSU result rows found (is this OSU output?)", file));
  record_topology(f, {.ranks = *o.ranks});
  f.config["backend"] = "mpi";
  f.config["ops"] = nlohmann::json::array({op});
  f.config["dtype"] = dtype;
  f.config["timing"] = {{"method", "osu"}, {"sample", "mean over iterations on each rank, averaged over ranks"}};
  return out;
}

}  // namespace ccbench::importer
