// The model overlay of `ccbench report --model`: measured busbw beside the model's curve and band.
#include "report/model_overlay.hpp"

#include <gtest/gtest.h>

#include <string>

#include "report/renderers.hpp"

namespace ccbench::report {
namespace {

ResultRow row(std::uint64_t bytes, double busbw) {
  ResultRow r;
  r.op = "allreduce";
  r.backend = "nccl";
  r.dtype = "float";
  r.redop = "sum";
  r.bytes = bytes;
  r.ranks = 32;
  r.busbw_gbps = busbw;
  r.algbw_gbps = busbw / (2.0 * 31 / 32);
  r.time_us.median = static_cast<double>(bytes) / (r.algbw_gbps * 1e3);
  r.samples_us = {r.time_us.median};
  return r;
}

ReportInput input_with_curve() {
  ReportInput in;
  ResultFile f;
  f.run.label = "p5 4 nodes";
  f.results = {row(1 << 20, 10.0), row(1 << 30, 280.0)};
  in.files.push_back(f);
  ModelCurve c;
  c.op = "allreduce";
  c.profile = "p5.48xlarge";
  c.nodes = 4;
  c.ranks_per_node = 8;
  c.model = "m.json";
  c.files = {0};
  c.points = {{1 << 20, 0, 0, 0, 12.5, 10.0, 15.0, false}, {1 << 30, 0, 0, 0, 350.0, 300.0, 400.0, true}};
  in.model_curves.push_back(c);
  return in;
}

TEST(ModelOverlay, MarkdownTableOfMeasuredAgainstModel) {
  const std::string md = model_overlay_markdown(input_with_curve());
  EXPECT_EQ(md,
            "## Model\n\n"
            "### allreduce on p5.48xlarge, 4 nodes x 8 ranks (model: m.json)\n\n"
            "| size | p5 4 nodes busbw GB/s | model busbw GB/s [90% band] | measured / model |\n"
            "|---:|---:|---:|---:|\n"
            "| 1 MiB | 10.0 | 12.5 [10.0, 15.0] | 0.800 |\n"
            "| 1 GiB | 280 | 350 [300, 400] (extrapolated) | 0.800 |\n\n");
}

TEST(ModelOverlay, HtmlChartHasTheMeasuredSeriesAndTheDashedModelWithItsBand) {
  const std::string html = model_overlay_html(input_with_curve());
  EXPECT_NE(html.find("<h3>allreduce on p5.48xlarge, 4 nodes x 8 ranks</h3>"), std::string::npos) << html;
  EXPECT_NE(html.find("model (m.json)"), std::string::npos);
  EXPECT_NE(html.find("1 GiB: 350 [300, 400] (extrapolated) GB/s"), std::string::npos) << html;
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("stroke-dasharray=\"6 4\""), std::string::npos);  // the model's line
}

TEST(ModelOverlay, NothingWithoutCurves) {
  ReportInput in = input_with_curve();
  in.model_curves.clear();
  EXPECT_EQ(model_overlay_html(in), "");
  EXPECT_EQ(model_overlay_markdown(in), "");
  EXPECT_EQ(model_overlay_text(in), "");
}

}  // namespace
}  // namespace ccbench::report
