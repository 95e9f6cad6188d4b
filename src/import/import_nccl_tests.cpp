// nccl-tests logs: the text table each *_perf binary prints (optionally behind mpirun's
// "[1,0]<stdout>:" prefixes, several runs concatenated) and the JSON file of its -J flag.
#include <fmt/format.h>

#include <charconv>
#include <climits>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "import/import.hpp"
#include "core/bandwidth.hpp"
#include "core/error.hpp"
#include "core/types.hpp"

namespace ccbench::importer {
namespace {

using namespace import_detail;

// A count in the log's header: a non-negative integer that fits an int, else exit 2 naming the
// file, line and field (std::stoi threw a bare "stoi" on a huge value).
int header_int(const std::string& text, const std::string& file, int line_no, const char* what) {
  int v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < 0) {
    throw ParseError(fmt::format("{}:{}: {} '{}' is not a count (0 to {})", file, line_no, what, text, INT_MAX));
  }
  return v;
}
using nlohmann::json;

std::optional<double> number(const std::string& tok) {
  double v = 0;
  const auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (ec != std::errc() || p != tok.data() + tok.size()) return std::nullopt;
  return v;
}

std::string canonical_dtype(const std::string& t) {
  const auto d = parse_dtype(t);
  return d ? std::string(name(*d)) : t;
}

// nccl-tests prints NCCL_VERSION_CODE, e.g. 22105 -> "2.21.5" (codes below 10000 are 2.x.y as 2000+x*100+y).
std::string nccl_version_from_code(long code) {
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
  if (code >= 1000) return fmt::format("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100);
  return std::to_string(code);
}

struct Columns {
  std::size_t size = 0, count = 1, type = 2, redop = 3;
  std::optional<std::size_t> root;
  struct Group {
    std::size_t time, algbw, busbw;
    std::optional<std::size_t> wrong;
  };
  std::vector<Group> groups;  // out-of-place, in-place
  std::size_t min_tokens = 0;
};

std::optional<Columns> columns_from_header(const std::vector<std::string>& toks) {
  Columns c;
  auto find = [&](const std::string& name, std::size_t from = 0) -> std::optional<std::size_t> {
    for (std::size_t i = from; i < toks.size(); ++i) {
      if (toks[i] == name) return i;
    }
    return std::nullopt;
  };
  const auto size = find("size");
  const auto count = find("count");
  if (!size || !count) return std::nullopt;
  c.size = *size;
  c.count = *count;
  c.type = find("type").value_or(*count + 1);
  c.redop = find("redop").value_or(c.type + 1);
  c.root = find("root");
  std::size_t from = 0;
  while (true) {
    auto t = find("time", from);
    const auto ct = find("cputime", from);
    if (!t || (ct && *ct < *t)) t = ct;
    if (!t) break;
    const auto alg = find("algbw", *t), bus = find("busbw", *t);
    if (!alg || !bus) break;
    Columns::Group g{*t, *alg, *bus, std::nullopt};
    if (*bus + 1 < toks.size() && (toks[*bus + 1] == "#wrong" || toks[*bus + 1] == "error")) g.wrong = *bus + 1;
    c.groups.push_back(g);
    c.min_tokens = std::max(c.min_tokens, (g.wrong ? *g.wrong : *bus) + 1);
    from = *bus + 1;
  }
  if (c.groups.empty()) return std::nullopt;
  return c;
}

// Header tokens relative to the data tokens: the header starts with "#", which is not a column.
std::vector<std::string> header_tokens(const std::string& line) {
  auto toks = split_ws(line);
  if (!toks.empty() && toks[0] == "#") {
    toks.erase(toks.begin());
  } else if (!toks.empty() && toks[0].starts_with("#")) {
    toks[0] = toks[0].substr(1);
  }
  return toks;
}

struct TrialCounter {
  std::map<std::tuple<std::string, std::string, std::string, bool, std::uint64_t>, int> seen;
  int next(const ResultRow& r) { return seen[{r.op, r.dtype, r.redop, r.in_place, r.bytes}]++; }
};

void check_busbw(const ResultRow& row, double reported, const std::string& where, std::vector<std::string>& warnings,
                 bool& warned) {
  // The log rounds to two decimals; beyond that, a mismatch means a wrong rank count or op.
  if (warned || !(reported > 0.05)) return;
  if (std::abs(row.busbw_gbps - reported) > 0.02 * reported + 0.01) {
    warnings.push_back(fmt::format(
        "{}: busbw from the time ({:.2f} GB/s with {} ranks) differs from the logged {:.2f} GB/s: check --ranks/--op",
        where, row.busbw_gbps, row.ranks, reported));
    warned = true;
  }
}

Imported import_text(const std::filesystem::path& path, const std::string& text, const ImportOptions& o) {
  Imported out;
  out.file = skeleton("nccl-tests", path, o);
  ResultFile& f = out.file;
  const std::string file = path.string();
  std::string op = o.op.value_or("");
  int rank_lines = 0;
  std::map<std::string, std::vector<std::string>> host_gpus;  // hostname -> GPU names
  std::vector<std::string> host_order;
  std::optional<Columns> cols;
  TrialCounter trials;
  bool warned = false;
  std::set<std::string> ops_seen, dtypes, redops;
  std::vector<std::pair<ResultRow, double>> pending;  // rows wait for the rank count
  std::vector<int> pending_lines;
  static const std::regex kRank(
      R"(^#\s+Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[[^\]]*\]\s+(.*)$)");
  static const std::regex kParams(R"(nThread\s+(\d+)\s+nGpus\s+(\d+).*warmup iters:\s*(\d+)\s+iters:\s*(\d+))");
  static const std::regex kValidation(R"(validation:\s*(\d+))");
  static const std::regex kStart(R"(^#\s*Collective test starting:\s*(\S+))");
  static const std::regex kVersion(R"(nccl-library=(\d+))");
  static const std::regex kNcclInfoVersion(R"(NCCL INFO NCCL version ([0-9.]+))");
  const auto lines = split_lines(text);
  for (std::size_t ln = 0; ln < lines.size(); ++ln) {
    const std::string line = strip_launcher_prefix(lines[ln]);
    const int line_no = static_cast<int>(ln + 1);
    std::smatch m;
    if (std::regex_search(line, m, kNcclInfoVersion)) f.software["nccl"] = m[1].str();
    if (line.find("NET/OFI Selected provider is efa") != std::string::npos) f.fabric["provider"] = "efa";
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    if (line[first] == '#') {
      if (std::regex_search(line, m, kRank)) {
        ++rank_lines;
        const std::string host = m[2].str();
        if (!host_gpus.contains(host)) host_order.push_back(host);
        host_gpus[host].push_back(m[4].str());
      } else if (std::regex_search(line, m, kParams)) {
        f.config["nthreads"] = header_int(m[1].str(), file, line_no, "nThread");
        f.config["ngpus"] = header_int(m[2].str(), file, line_no, "nGpus");
        f.config["warmup"] = header_int(m[3].str(), file, line_no, "warmup iters");
        f.config["iters"] = header_int(m[4].str(), file, line_no, "iters");
        if (std::regex_search(line, m, kValidation)) {
          f.config["check"] = header_int(m[1].str(), file, line_no, "validation");
        }
      } else if (std::regex_search(line, m, kStart)) {
        if (!o.op) {
          op = op_from_tool_name(m[1].str());
          if (op.empty())
            throw ParseError(fmt::format("{}:{}: unsupported nccl-tests binary '{}'", file, line_no, m[1].str()));
        }
      } else if (std::regex_search(line, m, kVersion)) {
        f.software["nccl"] = nccl_version_from_code(header_int(m[1].str(), file, line_no, "NCCL version"));
      } else if (auto c = columns_from_header(header_tokens(line))) {
        cols = c;
      }
      continue;
    }
    // A data row starts with the size; NCCL INFO lines and the like start with a host name.
    const auto toks = split_ws(line);
    if (toks.empty() || !number(toks[0]) || !cols) continue;
    if (toks.size() < cols->min_tokens) {
      throw ParseError(fmt::format("{}:{}: truncated table row ({} columns, expected {})", file, line_no, toks.size(),
                                   cols->min_tokens));
    }
    if (op.empty()) {
      op = op_from_tool_name(path.filename().string());
      if (op.empty()) {
        throw ParseError(fmt::format(
            "{}:{}: cannot tell which collective this log measured (no '# Collective test starting' line): pass --op",
            file, line_no));
      }
    }
    const auto size = number(toks[cols->size]);
    const auto count = number(toks[cols->count]);
    if (!size || !count || *size <= 0 || *count < 0) {
      throw ParseError(fmt::format("{}:{}: size and count must be non-negative integers", file, line_no));
    }
    const std::string dtype = canonical_dtype(toks[cols->type]);
    const std::string redop = toks[cols->redop];
    for (std::size_t g = 0; g < cols->groups.size(); ++g) {
      const auto& grp = cols->groups[g];
      const std::string& ttok = toks[grp.time];
      if (ttok == "N/A") continue;  // nccl-tests leaves a half empty in some modes
      const auto t = number(ttok);
      if (!t || !std::isfinite(*t) || *t <= 0) {
        throw ParseError(
            fmt::format("{}:{}: time '{}' must be a positive number of microseconds", file, line_no, ttok));
      }
      ResultRow row = summary_row(op, dtype, redop, g == 1, static_cast<std::uint64_t>(*size),
                                  static_cast<std::uint64_t>(*count), 0, 0, *t);
      row.backend = "nccl";
      if (cols->root) {
        if (auto r = number(toks[*cols->root])) row.root = static_cast<int>(*r);
      }
      if (grp.wrong) {
        if (auto w = number(toks[*grp.wrong]); w && *w > 0) row.wrong = static_cast<std::uint64_t>(*w);
      }
      row.trial = trials.next(row);
      const auto bus = number(toks[grp.busbw]);
      const auto alg = number(toks[grp.algbw]);
      if (alg) row.extra["reported_algbw_gbps"] = *alg;
      if (bus) row.extra["reported_busbw_gbps"] = *bus;
      ops_seen.insert(op);
      dtypes.insert(dtype);
      redops.insert(redop);
      pending.emplace_back(std::move(row), bus.value_or(0.0));
      pending_lines.push_back(line_no);
    }
  }
  if (pending.empty()) {
    throw ParseError(fmt::format("{}: no nccl-tests result rows found (is this a nccl-tests log?)", file));
  }
  const int ranks = o.ranks.value_or(rank_lines);
  if (ranks <= 0) {
    throw ParseError(
        fmt::format("{}: the log lists no '#  Rank' lines, so the rank count is unknown: pass --ranks", file));
  }
  for (std::size_t i = 0; i < pending.size(); ++i) {
    auto& [row, reported] = pending[i];
    row.ranks = ranks;
    const auto parsed = parse_op(row.op);
    row.busbw_gbps = row.algbw_gbps * (parsed ? bus_factor(*parsed, ranks) : 1.0);
    check_busbw(row, reported, fmt::format("{}:{}", file, pending_lines[i]), out.warnings, warned);
    f.results.push_back(std::move(row));
  }
  f.system["ranks"] = ranks;
  if (!host_order.empty()) {
    json hosts = json::array();
    for (const auto& h : host_order) {
      json gpus = json::array();
      for (std::size_t i = 0; i < host_gpus[h].size(); ++i) gpus.push_back({{"index", i}, {"name", host_gpus[h][i]}});
      hosts.push_back({{"hostname", h}, {"gpus", gpus}});
    }
    f.system["hosts"] = hosts;
    f.system["nodes"] = host_order.size();
    if (ranks % static_cast<int>(host_order.size()) == 0) {
      f.system["ranks_per_node"] = ranks / static_cast<int>(host_order.size());
    }
  }
  f.config["backend"] = "nccl";
  f.config["ops"] = std::vector<std::string>(ops_seen.begin(), ops_seen.end());
  if (dtypes.size() == 1) f.config["dtype"] = *dtypes.begin();
  if (redops.size() == 1) f.config["redop"] = *redops.begin();
  f.config["timing"] = {{"method", "nccl-tests"}, {"sample", "mean over iterations, averaged over ranks"}};
  return out;
}

[[noreturn]] void jfail(const std::string& file, const std::string& path, const std::string& what) {
  throw ParseError(fmt::format("{}: {}: {}", file, path, what));
}

double jtime(const json& v, const std::string& file, const std::string& path) {
  if (!v.is_number())
    jfail(file, path, v.is_string() ? "not a number (" + v.get<std::string>() + ")" : "must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d <= 0) jfail(file, path, "must be a positive time in microseconds");
  return d;
}

Imported import_json(const std::filesystem::path& path, const std::string& text, const ImportOptions& o) {
  const std::string file = path.string();
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    const std::size_t offset = std::min<std::size_t>(e.byte, text.size());
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
    throw ParseError(fmt::format("{}:{}: malformed JSON ({})", file, line,
                                 offset >= text.size() ? std::string("truncated file") : std::string(e.what())));
  }
  Imported out;
  out.file = skeleton("nccl-tests", path, o);
  ResultFile& f = out.file;
  if (!j.is_object()) jfail(file, "/", "an nccl-tests JSON file must be an object");
  if (!j.contains("results") || !j["results"].is_array()) jfail(file, "/results", "missing or not an array");
  std::string op = o.op.value_or("");
  if (op.empty() && j.contains("args") && j["args"].is_array() && !j["args"].empty() && j["args"][0].is_string()) {
    op = op_from_tool_name(j["args"][0].get<std::string>());
  }
  if (op.empty()) jfail(file, "/args/0", "cannot tell which collective ran from the program name: pass --op");
  int ranks = o.ranks.value_or(0);
  const json* devices = nullptr;
  if (j.contains("config") && j["config"].is_object()) {
    const json& cfg = j["config"];
    if (cfg.contains("devices") && cfg["devices"].is_array()) devices = &cfg["devices"];
    if (cfg.contains("iterations") && cfg["iterations"].is_number_integer()) f.config["iters"] = cfg["iterations"];
    if (cfg.contains("warmup_iters") && cfg["warmup_iters"].is_number_integer())
      f.config["warmup"] = cfg["warmup_iters"];
  }
  if (ranks == 0 && devices) ranks = static_cast<int>(devices->size());
  if (ranks <= 0) jfail(file, "/config/devices", "no device list, so the rank count is unknown: pass --ranks");
  if (j.contains("nccl_version") && j["nccl_version"].is_number_integer()) {
    f.software["nccl"] = nccl_version_from_code(j["nccl_version"].get<long>());
  }
  if (devices) {
    std::vector<std::string> order;
    std::map<std::string, json> hosts;
    for (const auto& d : *devices) {
      if (!d.is_object()) continue;
      const std::string h = d.value("hostname", std::string("?"));
      if (!hosts.contains(h)) {
        order.push_back(h);
        hosts[h] = {{"hostname", h}, {"gpus", json::array()}};
      }
      hosts[h]["gpus"].push_back({{"index", d.value("device", 0)}, {"name", d.value("device_info", std::string())}});
    }
    json list = json::array();
    for (const auto& h : order) list.push_back(hosts[h]);
    f.system["hosts"] = list;
    f.system["nodes"] = order.size();
    if (!order.empty() && ranks % static_cast<int>(order.size()) == 0) {
      f.system["ranks_per_node"] = ranks / static_cast<int>(order.size());
    }
  }
  f.system["ranks"] = ranks;
  TrialCounter trials;
  bool warned = false;
  bool raw_samples = false;
  std::set<std::string> dtypes, redops;
  const json& results = j["results"];
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string p = fmt::format("/results/{}", i);
    const json& r = results[i];
    if (!r.is_object()) jfail(file, p, "must be an object");
    if (!r.contains("size") || !r["size"].is_number_unsigned()) jfail(file, p + "/size", "missing or not a byte count");
    const auto bytes = r["size"].get<std::uint64_t>();
    const auto count = r.contains("count") && r["count"].is_number_unsigned() ? r["count"].get<std::uint64_t>() : 0;
    const std::string dtype = canonical_dtype(r.value("type", std::string("float")));
    const std::string redop = r.value("redop", std::string("none"));
    int root = -1;
    if (r.contains("root")) {
      const json& rt = r["root"];
      if (rt.is_number_integer()) root = rt.get<int>();
      if (rt.is_string()) {
        if (auto v = number(split_ws(rt.get<std::string>()).empty() ? "" : split_ws(rt.get<std::string>())[0])) {
          root = static_cast<int>(*v);
        }
      }
    }
    for (const auto& [key, in_place] : {std::pair{"out_of_place", false}, std::pair{"in_place", true}}) {
      if (!r.contains(key) || r[key].is_null()) continue;
      const json& g = r[key];
      const std::string gp = p + "/" + key;
      if (!g.is_object()) jfail(file, gp, "must be an object");
      const char* tkey = g.contains("time") ? "time" : "cpu_time";
      if (!g.contains(tkey)) jfail(file, gp + "/time", "missing field");
      const double t = jtime(g[tkey], file, gp + "/" + tkey);
      ResultRow row = summary_row(op, dtype, redop, in_place, bytes, count, ranks, 0, t);
      row.backend = "nccl";
      row.root = root;
      if (g.contains("nwrong") && g["nwrong"].is_number() && g["nwrong"].get<double>() > 0) {
        row.wrong = static_cast<std::uint64_t>(g["nwrong"].get<double>());
      }
      const std::string per_iter = std::string(key) + "_per_iter";
      if (r.contains(per_iter) && r[per_iter].is_object() && r[per_iter].contains("times_us") &&
          r[per_iter]["times_us"].is_array() && !r[per_iter]["times_us"].empty()) {
        // Per-iteration timing (-I): real samples, so the row is raw.
        const json& times = r[per_iter]["times_us"];
        row.samples_us.clear();
        for (std::size_t s = 0; s < times.size(); ++s) {
          row.samples_us.push_back(jtime(times[s], file, fmt::format("{}/times_us/{}", p + "/" + per_iter, s)));
        }
        row.samples_kind = "raw";
        raw_samples = true;
      }
      row.trial = trials.next(row);
      if (g.contains("alg_bw") && g["alg_bw"].is_number()) row.extra["reported_algbw_gbps"] = g["alg_bw"];
      double reported = 0;
      if (g.contains("bus_bw") && g["bus_bw"].is_number()) {
        reported = g["bus_bw"].get<double>();
        row.extra["reported_busbw_gbps"] = reported;
      }
      check_busbw(row, reported, file + ": " + gp, out.warnings, warned);
      dtypes.insert(dtype);
      redops.insert(redop);
      f.results.push_back(std::move(row));
    }
  }
  if (f.results.empty()) jfail(file, "/results", "no result rows");
  f.config["backend"] = "nccl";
  f.config["ops"] = json::array({op});
  if (dtypes.size() == 1) f.config["dtype"] = *dtypes.begin();
  if (redops.size() == 1) f.config["redop"] = *redops.begin();
  f.config["timing"] = {
      {"method", "nccl-tests"},
      {"sample", raw_samples ? "per-iteration CUDA event time" : "mean over iterations, averaged over ranks"}};
  if (j.contains("start_time") && j["start_time"].is_string()) f.run.started_at = j["start_time"].get<std::string>();
  if (j.contains("end_time") && j["end_time"].is_string()) f.run.finished_at = j["end_time"].get<std::string>();
  return out;
}

}  // namespace

Imported import_nccl_tests(const std::filesystem::path& path, const ImportOptions& options) {
  const std::string text = read_text(path);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw ParseError(path.string() + ": empty file");
  if (text[first] == '{') return import_json(path, text, options);
  return import_text(path, text, options);
}

}  // namespace ccbench::importer
