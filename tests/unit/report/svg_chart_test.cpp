#include "report/svg_chart.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ccbench::report {
namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

TEST(SvgChart, DrawsALinePerSeriesWithBandsMarkersAndLegend) {
  ChartSpec spec;
  spec.title = "allreduce: bus bandwidth";
  ChartSeries a{"p5en", series_color(0), false, {{8, 0.001, 0.0009, 0.0011, "a"}, {1 << 20, 50, 45, 55, "b"}}};
  ChartSeries b{"p6 & <b200>", series_color(1), true, {{8, 0.002, kNaN, kNaN, "c"}, {1 << 20, 60, kNaN, kNaN, "d"}}};
  const std::string svg = svg_line_chart(spec, {a, b});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(count(svg, "<polyline"), 2u);
  EXPECT_EQ(count(svg, "class=\"band\""), 1u);  // b has no CI
  EXPECT_EQ(count(svg, "<circle"), 4u);
  EXPECT_NE(svg.find("p6 &amp; &lt;b200&gt;"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray=\"6 4\""), std::string::npos);
  // Log axes: decade labels on y, power-of-two sizes on x.
  EXPECT_NE(svg.find(">0.001<"), std::string::npos);
  EXPECT_NE(svg.find(">100<"), std::string::npos);
  EXPECT_NE(svg.find(">1M<"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(SvgChart, SkipsNonPositiveValuesOnLogAxesAndSaysWhenEmpty) {
  ChartSpec spec;
  ChartSeries zero{"zero", series_color(0), false, {{8, 0, kNaN, kNaN, ""}, {16, -1, kNaN, kNaN, ""}}};
  const std::string svg = svg_line_chart(spec, {zero});
  EXPECT_EQ(count(svg, "<polyline"), 0u);
  EXPECT_NE(svg.find("no data"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
}

TEST(SvgChart, LinearAxisWithReferenceAndTargetBand) {
  ChartSpec spec;
  spec.log_y = false;
  spec.reference_y = 1.0;
  spec.target_band = std::pair{1.13, 1.23};
  ChartSeries r{"allreduce", series_color(0), false, {{1024, 1.17, 1.15, 1.19, ""}, {4096, 1.18, 1.1, 1.25, ""}}};
  const std::string svg = svg_line_chart(spec, {r});
  EXPECT_EQ(count(svg, "class=\"reference\""), 1u);
  EXPECT_EQ(count(svg, "class=\"target\""), 1u);
  EXPECT_EQ(count(svg, "<polyline"), 1u);
}

TEST(SvgChart, SinglePointStillGetsAnAxisRange) {
  ChartSpec spec;
  ChartSeries one{"one", series_color(0), false, {{1024, 5, kNaN, kNaN, ""}}};
  const std::string svg = svg_line_chart(spec, {one});
  EXPECT_EQ(count(svg, "<circle"), 1u);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
}

}  // namespace
}  // namespace ccbench::report
