// Text tables in the layout nccl-tests users read every day: one table per run and op, out-of-place
// and in-place side by side, plus ccbench's CI of the median. Trials are folded (median over trials).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/renderers.hpp"
#include "report/report_common.hpp"

namespace ccbench::report {

namespace {

// "± 0.8%": the CI's larger half-width relative to the median.
std::string ci_percent(const Point& p) {
  if (std::isnan(p.time_lo_us) || p.time_median_us <= 0) return "N/A";
  const double half = std::max(p.time_median_us - p.time_lo_us, p.time_hi_us - p.time_median_us);
  return fmt::format("{:.1f}", 100.0 * half / p.time_median_us);
}

std::string cells(const Point* p) {
  if (p == nullptr) return fmt::format("{:>10} {:>6} {:>8} {:>8} {:>7}", "N/A", "", "N/A", "N/A", "N/A");
  return fmt::format("{:>10} {:>6} {:>8.2f} {:>8.2f} {:>7}", sig(p->time_median_us, 4), ci_percent(*p), p->algbw_gbps,
                     p->busbw_gbps, p->wrong);
}

}  // namespace

std::string render_table(const ReportInput& input) {
  std::string out;
  const auto labels = display_labels(input.files);
  for (std::size_t f = 0; f < input.files.size(); ++f) {
    const ResultFile& file = input.files[f];
    out += fmt::format("# ccbench report: {}{}\n", labels[f], file.source.empty() ? "" : " (" + file.source + ")");
    out +=
        fmt::format("# instance {} | nodes {} | ranks {} | fabric {} {} | status {}\n",
                    meta(file, "system", "instance_type"), meta(file, "system", "nodes"), meta(file, "system", "ranks"),
                    meta(file, "fabric", "path"), meta(file, "fabric", "generation"), file.run.status);
    // Pair each out-of-place series with its in-place twin.
    const auto series = build_series(file);
    struct Pair {
      const Series* out_of_place = nullptr;
      const Series* in_place = nullptr;
    };
    std::vector<std::pair<SeriesKey, Pair>> pairs;
    for (const auto& s : series) {
      SeriesKey k = s.key;
      k.in_place = false;
      auto it = std::ranges::find_if(pairs, [&](const auto& p) { return p.first == k; });
      if (it == pairs.end()) {
        pairs.emplace_back(k, Pair{});
        it = pairs.end() - 1;
      }
      (s.key.in_place ? it->second.in_place : it->second.out_of_place) = &s;
    }
    for (const auto& [key, pair] : pairs) {
      out += fmt::format("#\n# {} ({}, {}, {})\n", key.op, key.backend, key.dtype, key.redop);
      out += fmt::format("# {:>12} {:>12} {:>8} {:>6} {:>5}   {:^44}   {:^44}\n", "", "", "", "", "", "out-of-place",
                         "in-place");
      out += fmt::format(
          "# {:>12} {:>12} {:>8} {:>6} {:>5}   {:>10} {:>6} {:>8} {:>8} {:>7}   {:>10} {:>6} {:>8} {:>8} {:>7}\n",
          "size", "count", "type", "redop", "root", "time", "ci95%", "algbw", "busbw", "#wrong", "time", "ci95%",
          "algbw", "busbw", "#wrong");
      out += fmt::format(
          "# {:>12} {:>12} {:>8} {:>6} {:>5}   {:>10} {:>6} {:>8} {:>8} {:>7}   {:>10} {:>6} {:>8} {:>8} {:>7}\n",
          "(B)", "(elements)", "", "", "", "(us)", "", "(GB/s)", "(GB/s)", "", "(us)", "", "(GB/s)", "(GB/s)", "");
      std::map<std::uint64_t, std::pair<const Point*, const Point*>> by_size;
      if (pair.out_of_place) {
        for (const auto& p : pair.out_of_place->points) by_size[p.bytes].first = &p;
      }
      if (pair.in_place) {
        for (const auto& p : pair.in_place->points) by_size[p.bytes].second = &p;
      }
      for (const auto& [bytes, pts] : by_size) {
        const Point* any = pts.first ? pts.first : pts.second;
        out += fmt::format("  {:>12} {:>12} {:>8} {:>6} {:>5}   {}   {}\n", bytes, any->count, key.dtype, key.redop,
                           any->root, cells(pts.first), cells(pts.second));
      }
    }
    out += "\n";
  }
  // No trailing blanks (the padded header cells leave some).
  std::string trimmed;
  std::size_t start = 0;
  while (start < out.size()) {
    std::size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::size_t last = end;
    while (last > start && out[last - 1] == ' ') --last;
    trimmed.append(out, start, last - start);
    if (end < out.size()) trimmed += '\n';
    start = end + 1;
  }
  return trimmed;
}

}  // namespace ccbench::report
