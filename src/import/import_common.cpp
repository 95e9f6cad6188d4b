#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/bandwidth.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/run_metadata.hpp"
#include "core/types.hpp"
#include "core/utf8.hpp"
#include "import/import.hpp"

namespace ccbench::importer {
namespace import_detail {

std::string read_text(const std::filesystem::path& path) { return read_input_file(path); }

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> split_ws(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string tok;
  while (in >> tok) out.push_back(tok);
  return out;
}

std::string strip_launcher_prefix(const std::string& line) {
  // Open MPI's --tag-output "[1,0]<stdout>:" and srun --label's "0: ", by hand: a regex per line
  // was a large share of a big import.
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t from = i;
    while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
    return i > from;
  };
  if (!line.empty() && line[0] == '[') {
    i = 1;
    if (!digits() || i >= line.size() || line[i++] != ',' || !digits()) return line;
    for (std::string_view tail : {"]<stdout>:", "]<stderr>:"}) {
      if (line.compare(i, tail.size(), tail) == 0) return line.substr(i + tail.size());
    }
    return line;
  }
  if (digits() && line.compare(i, 2, ": ") == 0) return line.substr(i + 2);
  return line;
}

std::optional<std::uint64_t> parse_whole(std::string_view token, std::uint64_t max) {
  if (token.empty() || token.size() > 20) return std::nullopt;
  std::uint64_t v = 0;
  const auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec != std::errc() || p != token.data() + token.size() || token[0] == '-' || token[0] == '+' || v > max) {
    return std::nullopt;
  }
  return v;
}

void note_non_utf8(std::string_view line, const std::string& file, std::size_t line_no,
                   std::vector<std::string>& warnings, bool& noted) {
  if (noted || is_valid_utf8(line)) return;
  noted = true;
  warnings.push_back(
      fmt::format("{}:{}: not UTF-8 (a Latin-1 byte?); text from it is recorded with \\xNN escapes", file, line_no));
}

std::string op_from_tool_name(std::string name) {
  const auto slash = name.find_last_of('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  std::string s;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (s.ends_with("perf")) s.resize(s.size() - 4);
  if (s.ends_with("mpi")) s.resize(s.size() - 3);
  if (s == "allreduce") return "allreduce";
  if (s == "allgather") return "allgather";
  if (s == "alltoall" || s.starts_with("alltoallpersonal")) return "alltoall";
  if (s == "reducescatter") return "reduce_scatter";
  if (s == "broadcast" || s == "bcast") return "broadcast";
  return "";
}

ResultFile skeleton(const std::string& source_tool, const std::filesystem::path& path, const ImportOptions& o) {
  ResultFile f;
  f.tool = {{"name", "ccbench"},
            {"version", o.tool_version},
            {"imported_from", source_tool},
            {"source_file", path.string()}};
  if (!o.tool_git.empty()) f.tool["git"] = o.tool_git;
  f.run.status = "complete";
  f.run.label = o.label;
  f.run.command = o.command;
  f.run.started_at = "";
  f.run.finished_at = "";
  TopologyRecord asserted;
  if (!o.instance_type.empty()) asserted.instance_type = o.instance_type;
  if (o.nodes) asserted.nodes = *o.nodes;
  record_topology(f, asserted);
  if (o.link_gbps || !o.efa_generation.empty()) {
    FabricRecord fabric;
    fabric.link_gbps = o.link_gbps;
    if (!o.efa_generation.empty()) fabric.generation = o.efa_generation;
    record_fabric(f, fabric);
  }
  return f;
}

ResultRow summary_row(const std::string& op, const std::string& dtype, const std::string& redop, bool in_place,
                      std::uint64_t bytes, std::uint64_t count, int ranks, int trial, double time_us) {
  ResultRow r;
  r.op = op;
  r.dtype = dtype;
  r.redop = redop;
  r.in_place = in_place;
  r.bytes = bytes;
  r.count = count;
  r.ranks = ranks;
  r.trial = trial;
  r.samples_us = {time_us};
  r.samples_kind = "summary";
  r.time_us.min = r.time_us.median = r.time_us.mean = r.time_us.p99 = r.time_us.max = time_us;
  const auto parsed = parse_op(op);
  r.algbw_gbps = algbw_gbps(bytes, time_us);
  r.busbw_gbps = r.algbw_gbps * (parsed ? bus_factor(*parsed, ranks) : 1.0);
  r.ci_target_met = false;
  return r;
}

}  // namespace import_detail

std::string imported_text(const ResultFile& file) {
  // Rows one at a time, each re-indented to where dump(1) puts it (depth 2), written straight into
  // the header's empty "results" array. Equal to imported_to_json(file).dump(1) + "\n" (but for the
  // order of run.non_utf8_escaped when both the header and rows needed escapes).
  ResultFile header = file;
  header.results.clear();
  auto head_text = [&](const std::vector<std::string>& row_escapes) {
    nlohmann::json head = to_json(header);
    if (!row_escapes.empty()) {
      auto& list = head["run"]["non_utf8_escaped"];
      if (!list.is_array()) list = nlohmann::json::array();
      for (const auto& p : row_escapes) list.push_back(p);
    }
    return head.dump(1);
  };
  static constexpr std::string_view kEmpty = "\"results\": []";
  std::string head = head_text({});
  std::size_t split = head.find(kEmpty) + kEmpty.size() - 1;  // just before the ']'
  std::string out;
  out.reserve(head.size() + file.results.size() * 640);
  out.append(head, 0, split);
  std::vector<std::string> escaped;
  for (std::size_t i = 0; i < file.results.size(); ++i) {
    nlohmann::json row = to_json(file.results[i]);
    if (row.value("samples_kind", std::string()) == "summary") row["time_us"]["ci95"] = nullptr;
    for (auto& p : escape_invalid_utf8(row, "/results/" + std::to_string(i))) escaped.push_back(std::move(p));
    const std::string text = row.dump(1);
    out += i == 0 ? "\n  " : ",\n  ";
    for (char c : text) {
      out += c;
      if (c == '\n') out += "  ";
    }
  }
  if (!file.results.empty()) out += "\n ";
  if (!escaped.empty()) {  // rare: the header must list the rows' escapes too
    const std::string rows = out.substr(split);
    head = head_text(escaped);
    split = head.find(kEmpty) + kEmpty.size() - 1;
    out = head.substr(0, split) + rows;
  }
  out.append(head, split, std::string::npos);
  out += '\n';
  return out;
}

nlohmann::json imported_to_json(const ResultFile& file) {
  nlohmann::json j = to_json(file);
  for (auto& row : j["results"]) {
    if (row.value("samples_kind", std::string()) == "summary") row["time_us"]["ci95"] = nullptr;
  }
  return j;
}

}  // namespace ccbench::importer
