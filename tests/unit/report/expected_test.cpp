// Rows that carry an `expected` object (model check -o, run --expect) in every renderer that shows
// it: the table's expect column, markdown's and HTML's "Against the expectation", the band on the
// HTML charts, the Prometheus gauges; exact cells and samples, and nothing of it for files
// without the object (golden_test.cpp holds those byte for byte).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "report/console_table.hpp"
#include "report/renderers.hpp"
#include "report/report_common.hpp"

namespace ccbench::report {
namespace {

ResultRow row(std::uint64_t bytes, bool in_place, double busbw_gbps) {
  ResultRow r;
  r.op = "allreduce";
  r.backend = "nccl";
  r.dtype = "float";
  r.redop = "sum";
  r.in_place = in_place;
  r.bytes = bytes;
  r.count = bytes / 4;
  r.ranks = 2;  // bus factor 1: busbw = algbw = bytes / time
  const double median = static_cast<double>(bytes) / (busbw_gbps * 1e3);
  r.samples_us = {median};
  r.time_us = {median, median, median, median, median, 0, 0};
  r.algbw_gbps = busbw_gbps;
  r.busbw_gbps = busbw_gbps;
  return r;
}

nlohmann::json judged(const std::string& verdict, const std::string& metric, double lo, double hi, double predicted,
                      double measured, double shortfall) {
  return {{"verdict", verdict},
          {"metric", metric},
          {"band", "99%"},
          {"lo", lo},
          {"hi", hi},
          {"predicted", predicted},
          {"measured", measured},
          {"shortfall_pct", shortfall},
          {"basis", "measured"},
          {"model", "m.json"},
          {"profile", "p5.48xlarge"}};
}

// 1 MiB out-of-place below its band (30 GB/s against [40, 60]), in-place normal; 4 KiB judged on
// its time (16 us against [10, 20] us); 1 GiB not covered.
ResultFile expected_file() {
  ResultFile f;
  f.run.status = "complete";
  f.run.label = "exp";
  f.system = {{"instance_type", "p5.48xlarge"}, {"nodes", 2}, {"ranks", 2}};
  ResultRow a = row(1 << 20, false, 30);
  a.extra["expected"] = judged("below", "busbw_gbps", 40, 60, 50, 30, 40);
  ResultRow b = row(1 << 20, true, 49);
  b.extra["expected"] = judged("normal", "busbw_gbps", 40, 60, 50, 49, 2);
  ResultRow c = row(4096, false, 0.256);  // 16 us
  c.extra["expected"] = judged("normal", "time_us", 10, 20, 15, 16, 100.0 / 15);
  ResultRow d = row(1 << 30, false, 100);
  d.extra["expected"] = {{"verdict", "not_covered"},
                         {"model", "m.json"},
                         {"profile", "p5.48xlarge"},
                         {"missing", "size range"},
                         {"reason", "model m.json has no allreduce on p5.48xlarge at 2 nodes x 1 rank: 1G is outside"}};
  f.results = {c, a, b, d};
  return f;
}

ResultFile plain_file() {
  ResultFile f = expected_file();
  for (auto& r : f.results) r.extra.erase("expected");
  return f;
}

ReportInput input_of(std::vector<ResultFile> files) {
  ReportInput in;
  in.files = std::move(files);
  return in;
}

TEST(Expected, FieldsConvertTheBandToTheOtherMetricThroughTheMeasuredValue) {
  const ResultFile f = expected_file();
  const ExpectedFields time = *expected_fields(f.results[0]);
  EXPECT_EQ(time.metric, "time_us");
  EXPECT_TRUE(time.covered());
  // busbw = C / time with C = 0.256 GB/s x 16 us: [C / 20, C / 10], predicted C / 15.
  const auto bw = time.as_busbw(0.256);
  ASSERT_TRUE(bw);
  EXPECT_DOUBLE_EQ(bw->lo, 0.256 * 16 / 20);
  EXPECT_DOUBLE_EQ(bw->hi, 0.256 * 16 / 10);
  EXPECT_DOUBLE_EQ(bw->predicted, 0.256 * 16 / 15);
  const auto same = time.as_time(16);
  EXPECT_DOUBLE_EQ(same->lo, 10);
  const ExpectedFields busbw = *expected_fields(f.results[1]);
  const auto t = busbw.as_time(f.results[1].time_us.median);
  EXPECT_DOUBLE_EQ(t->lo, f.results[1].time_us.median * 30 / 60);
  EXPECT_DOUBLE_EQ(t->hi, f.results[1].time_us.median * 30 / 40);
  EXPECT_FALSE(expected_fields(f.results[3])->covered());
  EXPECT_FALSE(expected_fields(f.results[3])->as_busbw(100));
  EXPECT_EQ(expected_cell(busbw), "below +40.0%");
  EXPECT_EQ(expected_cell(*expected_fields(f.results[3])), "not covered");
  EXPECT_FALSE(expected_fields(plain_file().results[0]));
}

TEST(Expected, TheTableGetsAnExpectColumnPerVariant) {
  const ResultFile f = expected_file();
  TableColumns columns;
  for (const auto& r : f.results) columns.include(r);
  EXPECT_TRUE(columns.expected);
  const std::string header = table_header("allreduce", 0, 1, columns);
  EXPECT_NE(header.find(" ci        expect        expect\n"), std::string::npos) << header;
  EXPECT_NE(header.find("(±%)   (shortfall)   (shortfall)\n"), std::string::npos) << header;
  const std::string line = table_row(&f.results[1], &f.results[2], columns);
  EXPECT_TRUE(line.ends_with("  below +40.0%  normal +2.0%\n")) << line;
  const std::string uncovered = table_row(&f.results[3], nullptr, columns);
  EXPECT_TRUE(uncovered.ends_with("   not covered             -\n")) << uncovered;
  TableColumns plain;
  for (const auto& r : plain_file().results) plain.include(r);
  EXPECT_FALSE(plain.expected);
  const std::string report = render_table(input_of({f}));
  EXPECT_NE(report.find("# expected: exp: 4 rows against m.json (99% band): 2 normal, 1 below, 1 not covered\n"),
            std::string::npos)
      << report;
  EXPECT_EQ(render_table(input_of({plain_file()})).find("expect"), std::string::npos);
}

TEST(Expected, MarkdownHasAnAgainstTheExpectationSection) {
  const std::string md = render_markdown(input_of({expected_file()}));
  const std::string section =
      "### Against the expectation\n\n"
      "- exp: 4 rows against m.json (99% band): 2 normal, 1 below, 1 not covered\n\n"
      "below / above: outside the model's band (slower / faster); shortfall: how much slower than predicted "
      "(docs/model.md, \"Is my number normal? model check\").\n\n"
      "### Rows against the expectation\n\n"
      "| run | op | size | place | trial | measured | band | predicted | verdict | shortfall | basis | why not covered "
      "|\n"
      "|---|---|---:|---|---:|---:|---:|---:|---|---:|---|---|\n"
      "| exp | allreduce | 4 KiB | out-of-place | 0 | 16.0 µs | 99% [10.0, 20.0] µs | 15.0 µs | normal | +6.7% | "
      "measured | — |\n"
      "| exp | allreduce | 1 MiB | out-of-place | 0 | 30.0 GB/s | 99% [40.0, 60.0] GB/s | 50.0 GB/s | **below** | "
      "+40.0% | measured | — |\n"
      "| exp | allreduce | 1 MiB | in-place | 0 | 49.0 GB/s | 99% [40.0, 60.0] GB/s | 50.0 GB/s | normal | +2.0% | "
      "measured | — |\n"
      "| exp | allreduce | 1 GiB | out-of-place | 0 | — | — | — | not_covered | — | — | model m.json has no allreduce "
      "on p5.48xlarge at 2 nodes x 1 rank: 1G is outside |\n\n";
  EXPECT_NE(md.find(section), std::string::npos) << md;
  EXPECT_EQ(render_markdown(input_of({plain_file()})).find("expectation"), std::string::npos);
}

TEST(Expected, HtmlDrawsTheBandAndListsTheRows) {
  ResultFile f = expected_file();
  f.run.label = "<exp>";
  const std::string html = render_html(input_of({f}));
  EXPECT_NE(html.find("<section id=\"expected\">\n<h2>Against the expectation</h2>\n"), std::string::npos);
  EXPECT_NE(html.find("&lt;exp&gt;: 4 rows against m.json (99% band): 2 normal, 1 below, 1 not covered."),
            std::string::npos);
  // The band is a series of each chart, in the legend, with the model's numbers in its tooltips.
  EXPECT_NE(html.find("expected: m.json (99% band) for &lt;exp&gt;"), std::string::npos);
  EXPECT_NE(html.find("busbw 50.00 [40.00, 60.00] GB/s"), std::string::npos) << html;
  EXPECT_NE(html.find("time 15.00 [10.00, 20.00] µs"), std::string::npos);
  EXPECT_EQ(html.find("<exp>"), std::string::npos);
  const std::string plain = render_html(input_of({plain_file()}));
  EXPECT_EQ(plain.find("id=\"expected\""), std::string::npos);
  EXPECT_EQ(plain.find("expected:"), std::string::npos);
}

TEST(Expected, PrometheusHasTheVerdictTheShortfallAndTheBand) {
  const std::string text = render_prometheus(input_of({expected_file()}));
  const std::string labels =
      "label=\"exp\",instance_type=\"p5.48xlarge\",op=\"allreduce\",backend=\"nccl\",dtype=\"float\",redop=\"sum\","
      "in_place=\"false\",bytes=\"1048576\",ranks=\"2\",trial=\"0\"";
  EXPECT_NE(text.find("ccbench_expected_verdict{" + labels + ",verdict=\"normal\"} 0\nccbench_expected_verdict{" +
                      labels + ",verdict=\"below\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ccbench_expected_shortfall_pct{" + labels + "} 40\n"), std::string::npos);
  EXPECT_NE(
      text.find("ccbench_expected_busbw_gbps{" + labels + ",bound=\"lower\"} 40\nccbench_expected_busbw_gbps{" +
                labels + ",bound=\"upper\"} 60\nccbench_expected_busbw_gbps{" + labels + ",bound=\"predicted\"} 50\n"),
      std::string::npos);
  // The not-covered row: its verdict only.
  const std::string gib =
      "label=\"exp\",instance_type=\"p5.48xlarge\",op=\"allreduce\",backend=\"nccl\",dtype=\"float\",redop=\"sum\","
      "in_place=\"false\",bytes=\"1073741824\",ranks=\"2\",trial=\"0\"";
  EXPECT_NE(text.find("ccbench_expected_verdict{" + gib + ",verdict=\"not_covered\"} 1\n"), std::string::npos);
  EXPECT_EQ(text.find("ccbench_expected_shortfall_pct{" + gib), std::string::npos);
  EXPECT_EQ(render_prometheus(input_of({plain_file()})).find("ccbench_expected"), std::string::npos);
}

}  // namespace
}  // namespace ccbench::report
