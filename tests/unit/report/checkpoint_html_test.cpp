// The HTML report's checkpoint section (src/report/checkpoint_html, svg_bars): throughput per trial
// and each rank's phases, from rows shaped as `ccbench checkpoint` writes them (docs/result-format.md).
#include "report/checkpoint_html.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "report/renderers.hpp"
#include "report/svg_bars.hpp"

namespace ccbench::report {
namespace {

using nlohmann::json;

ResultRow phase_row(const std::string& op, int trial, double gbps, json checkpoint) {
  ResultRow r;
  r.op = op;
  r.backend = "posix";
  r.dtype = "uint8";
  r.bytes = 32 << 20;
  r.ranks = 2;
  r.trial = trial;
  r.busbw_gbps = r.algbw_gbps = gbps;
  r.extra["durable"] = true;
  r.extra["cache_drop"] = op == "checkpoint_read" ? json("drop_caches") : json(nullptr);
  r.extra["plausibility"] = nullptr;
  r.extra["checkpoint"] = std::move(checkpoint);
  return r;
}

// Two trials; in the last, rank 0: open 0.1, write 1.0, fsync 0.4, close 0.1 (ends at 1.6 s);
// rank 1 ends at 1.2 s; the commit takes 0.4 s: the write is durable at 2.0 s.
ResultFile checkpoint_file() {
  ResultFile f;
  f.run.status = "complete";
  f.run.label = "nvme";
  f.source = "nvme.json";
  const json ranks = json::array({{{"rank", 0},
                                   {"host", "h0"},
                                   {"start_s", 0.0},
                                   {"open_s", 0.1},
                                   {"write_s", 1.0},
                                   {"fsync_s", 0.4},
                                   {"close_s", 0.1},
                                   {"end_s", 1.6}},
                                  {{"rank", 1},
                                   {"host", "h0"},
                                   {"start_s", 0.0},
                                   {"open_s", 0.1},
                                   {"write_s", 0.8},
                                   {"fsync_s", 0.2},
                                   {"close_s", 0.1},
                                   {"end_s", 1.2}}});
  const json reads = json::array({{{"rank", 0},
                                   {"host", "h0"},
                                   {"start_s", 0.0},
                                   {"open_s", 0.05},
                                   {"read_s", 0.9},
                                   {"close_s", 0.05},
                                   {"end_s", 1.0}}});
  for (int t = 0; t < 2; ++t) {
    f.results.push_back(phase_row("checkpoint_write", t, 0.0168 - 0.001 * t,
                                  {{"per_rank", ranks},
                                   {"time_to_durable_s", 2.0},
                                   {"slowest", {{"rank", 0}, {"host", "h0"}, {"tail_ratio", 1.14}}}}));
    f.results.push_back(phase_row("checkpoint_commit", t, 0, {{"phase", "commit"}, {"commit_s", 0.4}}));
    f.results.push_back(phase_row("checkpoint_read", t, 0.0336, {{"per_rank", reads}, {"ranks_s", 1.0}}));
  }
  return f;
}

double attr(const std::string& element, const std::string& name) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(element, m, std::regex(" " + name + "=\"([-0-9.]+)\""))) << element;
  return std::stod(m[1]);
}

TEST(CheckpointHtml, ThroughputPerTrialAndPhasesPerRank) {
  ReportInput in;
  in.files = {checkpoint_file()};
  const std::string html = render_html(in);
  EXPECT_NE(html.find("<h2>Checkpoints</h2>"), std::string::npos);
  // The checkpoint ops are drawn here, not as size sweeps of one point.
  EXPECT_EQ(html.find("id=\"op-checkpoint_write\""), std::string::npos);
  EXPECT_NE(html.find("checkpoint: throughput per trial"), std::string::npos);
  EXPECT_NE(html.find("nvme write"), std::string::npos);
  EXPECT_NE(html.find("nvme read"), std::string::npos);
  // Two trials a phase: two markers per line.
  EXPECT_NE(html.find("trial 1: 0.01580 GB/s, 2.000 s to durable"), std::string::npos);
  // Bars of the last trial: rank 0 write (4 segments), rank 1 write (4), the commit (1), rank 0 read (3).
  std::size_t segments = 0;
  for (std::size_t p = html.find("class=\"segment\""); p != std::string::npos;
       p = html.find("class=\"segment\"", p + 1))
    ++segments;
  EXPECT_EQ(segments, 12u);
  // The data table names the slowest rank, the commit and the cache drop.
  EXPECT_NE(html.find("<td>0 (h0)</td><td>1.14</td>"), std::string::npos);
  EXPECT_NE(html.find("drop_caches"), std::string::npos);
}

TEST(CheckpointHtml, NoSectionWithoutCheckpointRows) { EXPECT_EQ(checkpoint_html_section({}, {}), ""); }

TEST(SvgBars, SegmentsStartAtTheOffsetAndScaleToTheLongestBar) {
  // The commit bar of the test file: from 1.6 s to 2.0 s, the longest bar's end.
  const std::vector<BarSegment> segs = {{"io", "#000000"}, {"commit", "#009E73"}};
  const std::string svg = svg_stacked_bars({.title = "t", .x_label = "s", .width = 600}, segs,
                                           {{"r0", 0.0, {1.6, 0.0}, "a"}, {"commit", 1.6, {0.0, 0.4}, "b"}});
  std::vector<std::string> rects;
  const std::regex rect("<rect class=\"segment\"[^>]*>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it)
    rects.push_back(it->str());
  ASSERT_EQ(rects.size(), 2u);
  const double left = attr(rects[0], "x"), io_w = attr(rects[0], "width");
  const double plot_w = io_w / 0.8;  // 1.6 of 2.0 seconds
  EXPECT_NEAR(attr(rects[1], "x"), left + 0.8 * plot_w, 0.02);
  EXPECT_NEAR(attr(rects[1], "width"), 0.2 * plot_w, 0.02);
  EXPECT_NEAR(left + plot_w, 600 - 18, 0.02);  // the longest bar ends at the plot's right edge
  EXPECT_NE(svg.find("commit: 0.4 s"), std::string::npos);
}

}  // namespace
}  // namespace ccbench::report
