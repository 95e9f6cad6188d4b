#include "report/checkpoint_html.hpp"

#include <fmt/format.h>

#include <cmath>

#include "report/report_common.hpp"
#include "report/svg_bars.hpp"
#include "report/svg_chart.hpp"

namespace ccbench::report {

namespace {

using nlohmann::json;

// A member of an object, null when `j` is not an object or lacks it (a hand-edited or older file
// must not stop the report).
json member(const json& j, const char* key) { return j.is_object() && j.contains(key) ? j[key] : json(); }

int rank_of(const json& j) {
  const json r = member(j, "rank");
  return r.is_number_integer() ? r.get<int>() : -1;
}

double number(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : kNaN;
}

std::string text(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

const ResultRow* last_row(const ResultFile& f, const std::string& op) {
  const ResultRow* last = nullptr;
  for (const auto& r : f.results)
    if (r.op == op) last = &r;
  return last;
}

// The commit time of `trial` in `f` (its checkpoint_commit row), 0 when there is none.
double commit_s(const ResultFile& f, int trial) {
  for (const auto& r : f.results)
    if (r.op == "checkpoint_commit" && r.trial == trial) return number(member(r.extra, "checkpoint"), "commit_s");
  return 0;
}

// One bar per rank that holds a shard: open, I/O, fsync, close from its start; then the commit.
void phase_bars(const ResultFile& f, const ResultRow& row, const std::string& label, std::vector<Bar>& bars) {
  const json c = member(row.extra, "checkpoint");
  const bool write = row.op == "checkpoint_write";
  double last_end = 0;
  const json per_rank = member(c, "per_rank");
  if (!per_rank.is_array()) return;
  for (const auto& r : per_rank) {
    const double io = number(r, write ? "write_s" : "read_s");
    if (std::isnan(io)) continue;
    Bar b;
    b.label = fmt::format("{} r{} {}", label, rank_of(r), write ? "write" : "read");
    b.offset = number(r, "start_s");
    b.values = {number(r, "open_s"), io, write ? number(r, "fsync_s") : 0.0, number(r, "close_s"), 0.0};
    b.tooltip = fmt::format("{}, trial {}, rank {} on {}", label, row.trial, rank_of(r), text(r, "host"));
    last_end = std::max(last_end, number(r, "end_s"));
    bars.push_back(std::move(b));
  }
  if (write) {
    Bar b;
    b.label = fmt::format("{} commit", label);
    b.offset = last_end;
    b.values = {0, 0, 0, 0, commit_s(f, row.trial)};
    b.tooltip = fmt::format("{}, trial {}: manifest, rename, parent fsync (rank 0)", label, row.trial);
    bars.push_back(std::move(b));
  }
}

}  // namespace

bool is_checkpoint_op(const std::string& op) { return op.rfind("checkpoint_", 0) == 0; }

std::string checkpoint_html_section(const std::vector<ResultFile>& files, const std::vector<std::string>& labels) {
  std::vector<ChartSeries> series;
  std::vector<Bar> bars;
  std::string table;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const ResultFile& f = files[i];
    for (const char* op : {"checkpoint_write", "checkpoint_read"}) {
      const bool write = std::string(op) == "checkpoint_write";
      ChartSeries s{fmt::format("{} {}", labels[i], write ? "write" : "read"), series_color(i), !write, {}};
      for (const auto& r : f.results) {
        if (r.op != op) continue;
        const json c = member(r.extra, "checkpoint");
        const json slow = member(c, "slowest");
        const std::string cache = r.extra.contains("cache_drop") && r.extra["cache_drop"].is_string()
                                      ? r.extra["cache_drop"].get<std::string>()
                                      : std::string("—");
        const std::string warning = r.extra.contains("plausibility") && r.extra["plausibility"].is_string()
                                        ? r.extra["plausibility"].get<std::string>()
                                        : std::string();
        const bool durable = !member(r.extra, "durable").is_boolean() || member(r.extra, "durable").get<bool>();
        s.points.push_back({static_cast<double>(r.trial), r.busbw_gbps, kNaN, kNaN,
                            fmt::format("{}\ntrial {}: {} GB/s, {} s to {}{}", s.name, r.trial, sig(r.busbw_gbps),
                                        sig(number(c, write ? "time_to_durable_s" : "ranks_s")),
                                        write ? (durable ? "durable" : "written (no fsync)") : "read",
                                        warning.empty() ? "" : "\n" + warning)});
        table += fmt::format(
            "<tr><td class=\"key\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
            "<td>{}</td><td>{}</td><td class=\"key\">{}</td></tr>\n",
            xml_escape(labels[i]), r.trial, xml_escape(r.op), human_bytes(r.bytes), sig(r.busbw_gbps),
            sig(number(c, write ? "time_to_durable_s" : "ranks_s")),
            write ? sig(commit_s(f, r.trial)) : std::string("—"),
            xml_escape(fmt::format("{} ({})", rank_of(slow), text(slow, "host"))), sig(number(slow, "tail_ratio"), 3),
            xml_escape(cache + (durable ? "" : ", not durable") + (warning.empty() ? "" : ": " + warning)));
      }
      if (!s.points.empty()) series.push_back(std::move(s));
      if (const ResultRow* last = last_row(f, op)) phase_bars(f, *last, labels[i], bars);
    }
  }
  if (series.empty()) return "";
  std::string out = "<section class=\"op\" id=\"checkpoint\">\n<h2>Checkpoints</h2>\n";
  out +=
      "<p class=\"sub\">Throughput = the checkpoint's bytes / time to durable (the first writing rank's start to "
      "the last one's end, plus the commit); reads after the cache drop named in the table. Bars: each rank's "
      "phases in the last trial of each run, from the barrier.</p>\n<div class=\"charts\">\n";
  ChartSpec spec;
  spec.title = "checkpoint: throughput per trial";
  spec.x_label = "trial";
  spec.y_label = "GB/s";
  spec.log_x = false;
  spec.x_is_bytes = false;
  spec.log_y = false;
  out += svg_line_chart(spec, series);
  const std::vector<BarSegment> segments = {{"open", "#56B4E9"},
                                            {"write / read", "#0072B2"},
                                            {"fsync", "#D55E00"},
                                            {"close", "#CC79A7"},
                                            {"commit", "#009E73"}};
  out += svg_stacked_bars({.title = "checkpoint: phases per rank (last trial)", .x_label = "seconds since the barrier"},
                          segments, bars);
  out +=
      "</div>\n<details><summary>data</summary>\n<table>\n<tr><th>run</th><th>trial</th><th>phase</th><th>bytes</th>"
      "<th>GB/s</th><th>time s</th><th>commit s</th><th>slowest rank</th><th>tail</th><th>cache, notes</th></tr>\n";
  out += table + "</table>\n</details>\n</section>\n";
  return out;
}

}  // namespace ccbench::report
