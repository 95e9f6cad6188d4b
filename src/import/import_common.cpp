#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>

#include "import/import.hpp"
#include "core/bandwidth.hpp"
#include "core/error.hpp"
#include "core/run_metadata.hpp"
#include "core/types.hpp"

namespace ccbench::importer {
namespace import_detail {

std::string read_text(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw ParseError(path.string() + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path.string() + ": cannot open");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

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
  static const std::regex kPrefix(R"(^\[\d+,\d+\]<std(out|err)>:)");
  std::smatch m;
  if (std::regex_search(line, m, kPrefix)) return line.substr(static_cast<std::size_t>(m.length(0)));
  return line;
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
  f.tool = {{"name", "ccbench"}, {"imported_from", source_tool}, {"source_file", path.string()}};
  f.run.status = "complete";
  f.run.label = o.label;
  f.run.command = o.command;
  f.run.started_at = "";
  f.run.finished_at = "";
  if (!o.instance_type.empty()) f.system["instance_type"] = o.instance_type;
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

nlohmann::json imported_to_json(const ResultFile& file) {
  nlohmann::json j = to_json(file);
  for (auto& row : j["results"]) {
    if (row.value("samples_kind", std::string()) == "summary") row["time_us"]["ci95"] = nullptr;
  }
  return j;
}

}  // namespace ccbench::importer
