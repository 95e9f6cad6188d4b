// nccl-tests logs: the text table each *_perf binary prints (optionally behind mpirun's
// "[1,0]<stdout>:" prefixes, several runs concatenated) and the JSON file of its -J flag.
#include <fmt/format.h>

#include <charconv>
#include <climits>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "core/bandwidth.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/run_metadata.hpp"
#include "core/types.hpp"
#include "import/import.hpp"

namespace ccbench::importer {
namespace {

using namespace import_detail;

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

// The log's own algbw and busbw are kept (recomputing them from the log's rounded time gave 27.17
// where nccl-tests printed 27.16); ours from the time only checks the rank count and op.
void keep_logged_bandwidth(ResultRow& row, std::optional<double> alg, std::optional<double> bus,
                           const std::string& where, std::vector<std::string>& warnings, bool& warned) {
  const auto parsed = parse_op(row.op);
  const double ours = row.algbw_gbps * (parsed ? bus_factor(*parsed, row.ranks) : 1.0);
  row.busbw_gbps = ours;
  if (alg && std::isfinite(*alg) && *alg >= 0) row.algbw_gbps = *alg;
  if (!bus || !std::isfinite(*bus) || *bus < 0) return;
  row.busbw_gbps = *bus;
  // The log rounds to two decimals; beyond that, a mismatch means a wrong rank count or op.
  if (warned || !(*bus > 0.05)) return;
  if (std::abs(ours - *bus) > 0.02 * *bus + 0.01) {
    warnings.push_back(fmt::format(
        "{}: busbw from the time ({:.2f} GB/s with {} ranks) differs from the logged {:.2f} GB/s: check --ranks/--op",
        where, ours, row.ranks, *bus));
    warned = true;
  }
}

// A row's logged bandwidths and line.
struct Logged {
  std::optional<double> alg, bus;
  std::size_t line = 0;
};

// The rank count n that nccl-tests' bus factor gives from the logged busbw/algbw of the largest
// size (the most digits): allreduce 2(n-1)/n, allgather, reduce_scatter and alltoall (n-1)/n;
// 0 when the op has no such factor (broadcast) or the ratio is not within 0.1 of a whole n >= 2
// (two-decimal rounding blurs it from about 128 ranks on).
int ranks_from_bus_factor(const std::vector<ResultRow>& rows, const std::vector<Logged>& logged, const std::string& op) {
  const auto parsed = parse_op(op);
  // busbw / algbw = scale (n-1)/n: scale 2 for allreduce, 1 for the ring ops; no n in a factor of 1.
  if (!parsed || (info(*parsed).bus != BusFactor::allreduce_ring && info(*parsed).bus != BusFactor::ring)) return 0;
  std::size_t best = rows.size();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (logged[i].alg && logged[i].bus && *logged[i].alg > 1.0 && *logged[i].bus > 1.0 &&
        (best == rows.size() || rows[i].bytes > rows[best].bytes)) {
      best = i;
    }
  }
  if (best == rows.size()) return 0;
  const double r = *logged[best].bus / *logged[best].alg;
  const double scale = info(*parsed).bus == BusFactor::allreduce_ring ? 2.0 : 1.0;
  if (!(r < scale)) return 0;
  const double n = scale / (scale - r);
  const double whole = std::round(n);
  if (whole < 2 || whole > 1e6 || std::abs(n - whole) > 0.1) return 0;
  return static_cast<int>(whole);
}

[[noreturn]] void line_fail(const std::string& file, std::size_t line_no, const std::string& what) {
  throw ParseError(fmt::format("{}:{}: {}", file, line_no, what));
}

// A small count from the log's header ("nThread 1", "iters: 20", "nccl-library=22602").
int header_count(const std::string& token, const char* name, const std::string& file, std::size_t line_no) {
  const auto v = parse_whole(token, 1000000000);
  if (!v) line_fail(file, line_no, fmt::format("{} '{}' is not a whole number up to 10^9", name, token));
  return static_cast<int>(*v);
}

// The text log, streamed: memory stays bounded by one line plus the rows (a 10 MB log held the text,
// a vector of its lines and each line again).
Imported import_text(const std::filesystem::path& path, LineReader& reader, const ImportOptions& o) {
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
  bool warned = false, non_utf8 = false;
  std::set<std::string> ops_seen, dtypes, redops;
  std::vector<Logged> logged;  // per row in f.results, until the rank count is known
  static const std::regex kRank(
      R"(^#\s+Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[[^\]]*\]\s+(.*)$)");
  static const std::regex kParams(R"(nThread\s+(\d+)\s+nGpus\s+(\d+).*warmup iters:\s*(\d+)\s+iters:\s*(\d+))");
  static const std::regex kValidation(R"(validation:\s*(\d+))");
  static const std::regex kStart(R"(^#\s*Collective test starting:\s*(\S+))");
  static const std::regex kVersion(R"(nccl-library=(\d+))");
  static const std::regex kNcclInfoVersion(R"(NCCL INFO NCCL version ([0-9.]+))");
  std::string_view raw;
  std::string line;
  while (reader.next(raw)) {
    const std::size_t line_no = reader.line_number();
    note_non_utf8(raw, file, line_no, out.warnings, non_utf8);
    line = strip_launcher_prefix(std::string(raw));
    std::smatch m;
    // Each regex runs only on lines that hold its literal: regexes on every line dominated.
    if (line.find("NCCL version") != std::string::npos && std::regex_search(line, m, kNcclInfoVersion)) {
      f.software["nccl"] = m[1].str();
    }
    if (line.find("NET/OFI Selected provider is efa") != std::string::npos) f.fabric["provider"] = "efa";
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    if (line[first] == '#') {
      if (line.find("Rank") != std::string::npos && std::regex_search(line, m, kRank)) {
        ++rank_lines;
        const std::string host = m[2].str();
        if (!host_gpus.contains(host)) host_order.push_back(host);
        host_gpus[host].push_back(m[4].str());
      } else if (line.find("nThread") != std::string::npos && std::regex_search(line, m, kParams)) {
        f.config["nthreads"] = header_count(m[1].str(), "nThread", file, line_no);
        f.config["ngpus"] = header_count(m[2].str(), "nGpus", file, line_no);
        f.config["warmup"] = header_count(m[3].str(), "warmup iters", file, line_no);
        f.config["iters"] = header_count(m[4].str(), "iters", file, line_no);
        if (std::regex_search(line, m, kValidation)) {
          f.config["check"] = header_count(m[1].str(), "validation", file, line_no);
        }
      } else if (line.find("Collective test starting") != std::string::npos && std::regex_search(line, m, kStart)) {
        if (!o.op) {
          op = op_from_tool_name(m[1].str());
          if (op.empty()) line_fail(file, line_no, fmt::format("unsupported nccl-tests binary '{}'", m[1].str()));
        }
      } else if (line.find("nccl-library=") != std::string::npos && std::regex_search(line, m, kVersion)) {
        f.software["nccl"] = nccl_version_from_code(header_count(m[1].str(), "nccl-library", file, line_no));
      } else if (auto c = columns_from_header(header_tokens(line))) {
        cols = c;
      }
      continue;
    }
    // A data row starts with the size; NCCL INFO lines and the like start with a host name.
    const auto toks = split_ws(line);
    if (toks.empty() || !number(toks[0]) || !cols) continue;
    if (toks.size() < cols->min_tokens) {
      line_fail(file, line_no,
                fmt::format("truncated table row ({} columns, expected {})", toks.size(), cols->min_tokens));
    }
    if (op.empty()) {
      // A log saved under the binary's name: "all_reduce_perf_2x_p5.48xlarge.txt" -> all_reduce_perf.
      std::string name = path.filename().string();
      if (const auto perf = name.find("_perf"); perf != std::string::npos) name.resize(perf + 5);
      op = op_from_tool_name(name);
      if (op.empty()) {
        line_fail(file, line_no,
                  "cannot tell which collective this log measured (no '# Collective test starting' line): pass --op");
      }
    }
    const auto size = parse_whole(toks[cols->size], kMaxImportBytes);
    const auto count = parse_whole(toks[cols->count], kMaxImportBytes);
    if (!size || *size == 0) {
      line_fail(file, line_no,
                fmt::format("size '{}' must be a whole number of bytes from 1 to 2^50", toks[cols->size]));
    }
    if (!count) {
      line_fail(file, line_no, fmt::format("count '{}' must be a whole number up to 2^50", toks[cols->count]));
    }
    const std::string dtype = canonical_dtype(toks[cols->type]);
    const std::string redop = toks[cols->redop];
    int root = -1;
    if (cols->root && toks[*cols->root] != "-1") {
      const auto r = parse_whole(toks[*cols->root], 1 << 24);
      if (!r) line_fail(file, line_no, fmt::format("root '{}' must be -1 or a rank", toks[*cols->root]));
      root = static_cast<int>(*r);
    }
    for (std::size_t g = 0; g < cols->groups.size(); ++g) {
      const auto& grp = cols->groups[g];
      const std::string& ttok = toks[grp.time];
      if (ttok == "N/A") continue;  // nccl-tests leaves a half empty in some modes
      const auto t = number(ttok);
      if (!t || !std::isfinite(*t) || *t <= 0) {
        line_fail(file, line_no, fmt::format("time '{}' must be a positive number of microseconds", ttok));
      }
      ResultRow row = summary_row(op, dtype, redop, g == 1, *size, *count, 0, 0, *t);
      row.backend = "nccl";
      if (cols->root) row.root = root;
      if (grp.wrong && toks[*grp.wrong] != "N/A") {
        const auto w = parse_whole(toks[*grp.wrong], std::uint64_t{1} << 62);
        if (!w) line_fail(file, line_no, fmt::format("#wrong '{}' must be a whole number", toks[*grp.wrong]));
        row.wrong = *w;
      }
      row.trial = trials.next(row);
      const auto bus = number(toks[grp.busbw]);
      const auto alg = number(toks[grp.algbw]);
      if (alg && std::isfinite(*alg)) row.extra["reported_algbw_gbps"] = *alg;
      if (bus && std::isfinite(*bus)) row.extra["reported_busbw_gbps"] = *bus;
      ops_seen.insert(op);
      dtypes.insert(dtype);
      redops.insert(redop);
      f.results.push_back(std::move(row));
      logged.push_back({alg, bus, line_no});
    }
  }
  if (f.results.empty()) {
    throw ParseError(fmt::format("{}: no nccl-tests result rows found (is this a nccl-tests log?)", file));
  }
  int ranks = o.ranks.value_or(rank_lines);
  if (ranks <= 0) {
    ranks = ranks_from_bus_factor(f.results, logged, op);
    if (ranks <= 0) {
      throw ParseError(fmt::format(
          "{}: the log lists no '#  Rank' lines and its busbw/algbw does not tell the rank count: pass --ranks", file));
    }
    out.warnings.push_back(fmt::format(
        "{}: no '#  Rank' lines: {} ranks, from busbw/algbw at the largest size (pass --ranks to set it)", file, ranks));
  }
  for (std::size_t i = 0; i < f.results.size(); ++i) {
    f.results[i].ranks = ranks;
    keep_logged_bandwidth(f.results[i], logged[i].alg, logged[i].bus, fmt::format("{}:{}", file, logged[i].line),
                          out.warnings, warned);
  }
  TopologyRecord topology{.ranks = ranks};
  if (host_order.empty() && o.nodes && ranks % *o.nodes == 0) topology.ranks_per_node = ranks / *o.nodes;
  if (!host_order.empty()) {
    json hosts = json::array();
    for (const auto& h : host_order) {
      json gpus = json::array();
      for (std::size_t i = 0; i < host_gpus[h].size(); ++i) gpus.push_back({{"index", i}, {"name", host_gpus[h][i]}});
      hosts.push_back({{"hostname", h}, {"gpus", gpus}});
    }
    topology.hosts = hosts;
    topology.nodes = static_cast<std::int64_t>(host_order.size());
    if (ranks % static_cast<int>(host_order.size()) == 0) {
      topology.ranks_per_node = ranks / static_cast<int>(host_order.size());
    }
  }
  record_topology(f, topology);
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
  } catch (const json::out_of_range& e) {  // a number beyond double, e.g. 1e999
    throw ParseError(fmt::format("{}: malformed JSON ({})", file, e.what()));
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
  TopologyRecord topology{.ranks = ranks};
  if (devices) {
    std::vector<std::string> order;
    std::map<std::string, json> hosts;
    for (const auto& d : *devices) {
      if (!d.is_object()) continue;
      const std::string h =
          d.contains("hostname") && d["hostname"].is_string() ? d["hostname"].get<std::string>() : "?";
      if (!hosts.contains(h)) {
        order.push_back(h);
        hosts[h] = {{"hostname", h}, {"gpus", json::array()}};
      }
      const json index = d.contains("device") && d["device"].is_number_integer() ? d["device"] : json(nullptr);
      const std::string info =
          d.contains("device_info") && d["device_info"].is_string() ? d["device_info"].get<std::string>() : "";
      hosts[h]["gpus"].push_back({{"index", index}, {"name", info}});
    }
    json list = json::array();
    for (const auto& h : order) list.push_back(hosts[h]);
    topology.hosts = list;
    topology.nodes = static_cast<std::int64_t>(order.size());
    if (!order.empty() && ranks % static_cast<int>(order.size()) == 0) {
      topology.ranks_per_node = ranks / static_cast<int>(order.size());
    }
  }
  if (!devices && o.nodes && ranks % *o.nodes == 0) topology.ranks_per_node = ranks / *o.nodes;
  record_topology(f, topology);
  TrialCounter trials;
  bool warned = false;
  bool raw_samples = false;
  std::set<std::string> dtypes, redops;
  const json& results = j["results"];
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string p = fmt::format("/results/{}", i);
    const json& r = results[i];
    if (!r.is_object()) jfail(file, p, "must be an object");
    if (!r.contains("size") || !r["size"].is_number_unsigned() || r["size"].get<std::uint64_t>() == 0 ||
        r["size"].get<std::uint64_t>() > kMaxImportBytes) {
      jfail(file, p + "/size", "missing or not a byte count from 1 to 2^50");
    }
    const auto bytes = r["size"].get<std::uint64_t>();
    std::uint64_t count = 0;
    if (r.contains("count")) {
      if (!r["count"].is_number_unsigned() || r["count"].get<std::uint64_t>() > kMaxImportBytes) {
        jfail(file, p + "/count", "must be a whole number up to 2^50");
      }
      count = r["count"].get<std::uint64_t>();
    }
    auto text_field = [&](const char* key, const char* fallback) {
      if (!r.contains(key)) return std::string(fallback);
      if (!r[key].is_string()) jfail(file, p + "/" + key, "must be a string");
      return r[key].get<std::string>();
    };
    const std::string dtype = canonical_dtype(text_field("type", "float"));
    const std::string redop = text_field("redop", "none");
    int root = -1;
    if (r.contains("root") && !r["root"].is_null()) {
      const json& rt = r["root"];
      std::string tok;
      if (rt.is_number_integer()) tok = rt.dump();
      if (rt.is_string() && !split_ws(rt.get<std::string>()).empty()) tok = split_ws(rt.get<std::string>())[0];
      if (const auto v = parse_whole(tok, 1 << 24)) {
        root = static_cast<int>(*v);
      } else if (tok != "-1") {
        jfail(file, p + "/root", "must be -1 or a rank");
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
      if (g.contains("nwrong") && !g["nwrong"].is_null()) {
        const json& w = g["nwrong"];
        const double d = w.is_number() ? w.get<double>() : -1.0;
        if (!(d >= 0 && d <= 4.6e18 && std::trunc(d) == d)) jfail(file, gp + "/nwrong", "must be a whole number");
        row.wrong = w.is_number_unsigned() ? w.get<std::uint64_t>() : static_cast<std::uint64_t>(d);
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
      std::optional<double> alg, bus;
      if (g.contains("alg_bw") && g["alg_bw"].is_number()) {
        alg = g["alg_bw"].get<double>();
        row.extra["reported_algbw_gbps"] = *alg;
      }
      if (g.contains("bus_bw") && g["bus_bw"].is_number()) {
        bus = g["bus_bw"].get<double>();
        row.extra["reported_busbw_gbps"] = *bus;
      }
      keep_logged_bandwidth(row, alg, bus, file + ": " + gp, out.warnings, warned);
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
  // nccl-tests -J writes one JSON object; a text log is streamed.
  {
    LineReader probe(path);
    std::string_view line;
    bool any = false;
    while (probe.next(line)) {
      const auto first = line.find_first_not_of(" \t\r");
      if (first == std::string_view::npos) continue;
      any = true;
      if (line[first] == '{') return import_json(path, read_text(path), options);
      break;
    }
    if (!any) throw ParseError(path.string() + ": empty file");
  }
  LineReader reader(path);
  return import_text(path, reader, options);
}

}  // namespace ccbench::importer
