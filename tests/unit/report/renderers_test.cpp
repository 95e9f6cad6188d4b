#include "report/renderers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "core/result.hpp"
#include "report/report_common.hpp"

namespace ccbench::report {
namespace {

ResultRow row(const std::string& op, std::uint64_t bytes, int trial, double median, double lo, double hi) {
  ResultRow r;
  r.op = op;
  r.backend = "mpi";
  r.dtype = "float";
  r.redop = op == "allreduce" ? "sum" : "none";
  r.bytes = bytes;
  r.count = bytes / 4;
  r.ranks = 2;
  r.trial = trial;
  r.samples_us = {lo, median, hi};
  r.time_us = {lo, median, median, hi, hi, lo, hi};
  r.algbw_gbps = static_cast<double>(bytes) / (median * 1e3);
  r.busbw_gbps = r.algbw_gbps;  // 2 ranks: factor 2(n-1)/n = 1
  r.ci_target_met = true;
  return r;
}

ResultFile file_with_label(const std::string& label) {
  ResultFile f;
  f.run.status = "complete";
  f.run.label = label;
  f.source = "runs/" + label + ".json";
  f.system = {{"instance_type", "p5en.48xlarge"}, {"nodes", 1}, {"ranks", 2}};
  f.results = {row("allreduce", 1024, 0, 10.0, 9.0, 11.0), row("allreduce", 1024, 1, 12.0, 11.0, 14.0),
               row("allreduce", 4096, 0, 20.0, 19.0, 21.0)};
  return f;
}

ReportInput input_of(std::vector<ResultFile> files) {
  ReportInput in;
  in.files = std::move(files);
  return in;
}

TEST(ReportFormat, ParsesNamesAndExtensions) {
  EXPECT_EQ(parse_format("html"), Format::html);
  EXPECT_EQ(parse_format("prom"), Format::prometheus);
  EXPECT_EQ(parse_format("md"), Format::markdown);
  EXPECT_FALSE(parse_format("pdf"));
  EXPECT_EQ(format_for_path("out/report.html"), Format::html);
  EXPECT_EQ(format_for_path("metrics.prom"), Format::prometheus);
  EXPECT_FALSE(format_for_path("results.json"));  // gbench or a result file: too ambiguous to guess
  for (auto f : {Format::table, Format::markdown, Format::csv, Format::html, Format::prometheus, Format::gbench}) {
    EXPECT_EQ(parse_format(name(f)), f);
  }
}

TEST(ReportCommon, LabelsAreUniqueAndFallBackToTheFileName) {
  ResultFile a = file_with_label("fleet");
  ResultFile b = file_with_label("fleet");
  ResultFile c;
  c.source = "x/nightly-42.json";
  const auto labels = display_labels({a, b, c});
  EXPECT_EQ(labels, (std::vector<std::string>{"fleet", "fleet (2)", "nightly-42"}));
}

TEST(ReportCommon, TrialsFoldIntoOnePointWithTheWidestBand) {
  const auto series = build_series(file_with_label("a"));
  ASSERT_EQ(series.size(), 1u);
  ASSERT_EQ(series[0].points.size(), 2u);
  const Point& p = series[0].points[0];
  EXPECT_EQ(p.bytes, 1024u);
  EXPECT_EQ(p.trials, 2);
  EXPECT_DOUBLE_EQ(p.time_median_us, 11.0);  // median of the trial medians 10 and 12
  EXPECT_DOUBLE_EQ(p.time_lo_us, 9.0);
  EXPECT_DOUBLE_EQ(p.time_hi_us, 14.0);
  // busbw's band inverts time's: the slowest bound gives the lowest bandwidth.
  // Trial 1 (median 12, CI up to 14) gives the lowest bound, trial 0 (median 10, CI down to 9) the highest.
  EXPECT_NEAR(p.busbw_lo_gbps, 1024.0 / (12.0 * 1e3) * 12.0 / 14.0, 1e-12);
  EXPECT_NEAR(p.busbw_hi_gbps, 1024.0 / (10.0 * 1e3) * 10.0 / 9.0, 1e-12);
}

TEST(ReportCommon, RowsWithoutACiDrawNoBand) {
  ResultFile f = file_with_label("a");
  for (auto& r : f.results) r.time_us.ci95_lo = r.time_us.ci95_hi = 0;
  const auto series = build_series(f);
  EXPECT_TRUE(std::isnan(series[0].points[0].time_lo_us));
  EXPECT_TRUE(std::isnan(series[0].points[0].busbw_hi_gbps));
}

TEST(ReportCommon, MetadataFlattensHostsToCountsAndDistinctValues) {
  ResultFile f = file_with_label("a");
  f.system["hosts"] = nlohmann::json::array({{{"hostname", "a"}, {"gpus", {{{"i", 0}}, {{"i", 1}}}}},
                                             {{"hostname", "b"}, {"gpus", {{{"i", 0}}, {{"i", 1}}}}}});
  const auto rows = flatten_metadata(f);
  auto value = [&](const std::string& key) {
    const auto it = std::ranges::find_if(rows, [&](const auto& r) { return r.first == key; });
    return it == rows.end() ? std::string("<absent>") : it->second;
  };
  EXPECT_EQ(value("system.hosts[]"), "2 entries");
  EXPECT_EQ(value("system.hosts[].hostname"), "a, b");
  EXPECT_EQ(value("system.hosts[].gpus"), "2 entries");
  EXPECT_EQ(value("system.instance_type"), "p5en.48xlarge");
}

TEST(Csv, QuotesFieldsPerRfc4180AndKeepsFullPrecision) {
  ResultFile f = file_with_label("a \"quoted\", label");
  f.results[0].time_us.median = 0.1 + 0.2;  // 0.30000000000000004 must survive
  const std::string csv = render_csv(input_of({f}));
  EXPECT_NE(csv.find("\"a \"\"quoted\"\", label\""), std::string::npos);
  EXPECT_NE(csv.find("0.30000000000000004"), std::string::npos);
  EXPECT_EQ(std::ranges::count(csv, '\n'), 1 + 3);  // header + one line per row
  EXPECT_EQ(csv.substr(0, 11), "file,label,");
}

TEST(Prometheus, EscapesLabelValuesAndUsesBaseUnitsForTime) {
  ResultFile f = file_with_label("back\\slash \"q\"\nnewline");
  const std::string text = render_prometheus(input_of({f}));
  EXPECT_NE(text.find(R"(label="back\\slash \"q\"\nnewline")"), std::string::npos);
  EXPECT_NE(text.find("# TYPE ccbench_busbw_gbps gauge"), std::string::npos);
  EXPECT_NE(text.find("# TYPE ccbench_time_seconds summary"), std::string::npos);
  // 10 us median of trial 0 at 1 KiB -> 1e-05 s
  EXPECT_NE(text.find("trial=\"0\",quantile=\"0.5\"} 1e-05"), std::string::npos);
  EXPECT_NE(text.find("ccbench_run_info{"), std::string::npos);
  // Every sample line's family was declared before it.
  std::size_t pos = 0;
  std::vector<std::string> declared;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("# TYPE ", 0) == 0) {
      declared.push_back(line.substr(7, line.find(' ', 7) - 7));
    } else if (!line.empty() && line[0] != '#') {
      const std::string metric = line.substr(0, line.find_first_of("{ "));
      const bool ok = std::ranges::any_of(declared, [&](const std::string& d) { return metric.rfind(d, 0) == 0; });
      EXPECT_TRUE(ok) << line;
    }
  }
}

TEST(Prometheus, DuplicateSeriesAreDroppedNotRepeated) {
  ResultFile f = file_with_label("a");
  f.results.push_back(f.results[0]);
  const std::string text = render_prometheus(input_of({f}));
  const std::string needle = "ccbench_busbw_gbps{label=\"a\",instance_type=\"p5en.48xlarge\",op=\"allreduce\"";
  std::size_t n = 0;
  for (std::size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  EXPECT_EQ(n, 3u);  // 1 KiB trials 0 and 1, 4 KiB
}

TEST(Gbench, WritesGoogleBenchmarkJson) {
  const auto j = nlohmann::json::parse(render_gbench(input_of({file_with_label("a")})));
  ASSERT_TRUE(j.contains("context"));
  ASSERT_EQ(j["benchmarks"].size(), 3u);
  const auto& b = j["benchmarks"][0];
  EXPECT_EQ(b["name"], "allreduce/float/sum/out/1024");
  EXPECT_EQ(b["run_name"], b["name"]);
  EXPECT_EQ(b["run_type"], "iteration");
  EXPECT_EQ(b["time_unit"], "us");
  EXPECT_EQ(b["repetitions"], 2);
  EXPECT_EQ(b["repetition_index"], 0);
  EXPECT_EQ(j["benchmarks"][1]["repetition_index"], 1);
  EXPECT_DOUBLE_EQ(b["real_time"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(b["cpu_time"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(b["bytes_per_second"].get<double>(), 1024.0 / 10e-6);
  // Same family, next instance for the next size.
  EXPECT_EQ(j["benchmarks"][2]["family_index"], b["family_index"]);
  EXPECT_EQ(j["benchmarks"][2]["per_family_instance_index"], 1);
}

TEST(Gbench, SeveralFilesKeepTheirNamesApart) {
  const auto j = nlohmann::json::parse(render_gbench(input_of({file_with_label("a"), file_with_label("b")})));
  EXPECT_EQ(j["benchmarks"][0]["name"], "a:allreduce/float/sum/out/1024");
  EXPECT_EQ(j["benchmarks"][3]["name"], "b:allreduce/float/sum/out/1024");
}

TEST(Html, IsSelfContainedAndEscapesText) {
  ResultFile f = file_with_label("<script>alert(1)</script>");
  const std::string html = render_html(input_of({f, file_with_label("other")}));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  // One busbw and one latency chart for the one op.
  std::size_t svgs = 0;
  for (std::size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) ++svgs;
  EXPECT_EQ(svgs, 2u);
  EXPECT_NE(html.find("class=\"band\""), std::string::npos);
}

TEST(Html, ShowsAnOverlaidVerdict) {
  ReportInput in = input_of({file_with_label("base"), file_with_label("cand")});
  in.baseline_files = 1;
  in.verdict = nlohmann::json{
      {"verdict", "confirmed"},
      {"exit_code", 0},
      {"claim", {{"expected_speedup", 0.18}, {"tolerance", 0.05}, {"band", {1.13, 1.23}}}},
      {"summary", {{"statistic", "geomean"}, {"ratio", 1.17}, {"ci", {1.15, 1.19}}, {"sizes", 2}}},
      {"rows",
       {{{"op", "allreduce"}, {"bytes", 1024}, {"ratio", 1.16}, {"ci", {1.1, 1.2}}, {"p_value", 0.001}},
        {{"op", "allreduce"}, {"bytes", 4096}, {"ratio", 1.18}, {"ci", {1.12, 1.24}}, {"p_value", 0.002}}}},
      {"differences", {{"software.nccl", {"2.26.2", "2.27.3"}}}},
      {"warnings", {"only 2 trials"}}};
  const std::string html = render_html(in);
  EXPECT_NE(html.find("badge good\">confirmed"), std::string::npos);
  EXPECT_NE(html.find("class=\"target\""), std::string::npos);
  EXPECT_NE(html.find("class=\"reference\""), std::string::npos);
  EXPECT_NE(html.find("only 2 trials"), std::string::npos);
  EXPECT_NE(html.find("2.27.3"), std::string::npos);
  const std::string md = render_markdown(in);
  EXPECT_NE(md.find("Verdict: **confirmed**"), std::string::npos);
  EXPECT_NE(md.find("base (baseline)"), std::string::npos);
}

TEST(Table, LooksLikeNcclTests) {
  const std::string text = render_table(input_of({file_with_label("a")}));
  EXPECT_NE(text.find("out-of-place"), std::string::npos);
  EXPECT_NE(text.find("in-place"), std::string::npos);
  EXPECT_NE(text.find("busbw"), std::string::npos);
  EXPECT_NE(text.find("1024"), std::string::npos);
}

TEST(Renderers, EveryFormatHandlesTheSampleFiles) {
  ReportInput in;
  for (const char* name : {"p5en-nccl.json", "p6-b200-nccl.json", "local-mpi.json"}) {
    in.files.push_back(load_result_file(std::string(CCBENCH_TEST_DATA) + "/" + name));
  }
  for (auto f : {Format::table, Format::markdown, Format::csv, Format::html, Format::prometheus, Format::gbench}) {
    EXPECT_GT(render(f, in).size(), 1000u) << name(f);
  }
  ReportInput empty;
  for (auto f : {Format::table, Format::markdown, Format::csv, Format::html, Format::prometheus, Format::gbench}) {
    EXPECT_NO_THROW(render(f, empty)) << name(f);
  }
}

}  // namespace
}  // namespace ccbench::report
