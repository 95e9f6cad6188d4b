// The plan tables in markdown and HTML, from a plan priced on a curve with known parameters
// (plan_test.cpp): 10 us + S / bandwidth, profile A at 100 GB/s and B at 200 GB/s, band +-10%.
#include "report/plan_table.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "model/plan.hpp"

namespace ccbench::model {
namespace {

nlohmann::json zero1_plan() {
  const Pricer price = [](const PredictQuery& q) {
    Prediction p;
    p.time_us = 10 + static_cast<double>(q.bytes) / ((q.profile == "A" ? 100 : 200) * 1e3);
    p.time_lo_us = 0.9 * p.time_us;
    p.time_hi_us = 1.1 * p.time_us;
    p.from_spec = q.profile == "B";
    return p;
  };
  const Workload w = parse_workload(
      "model: {parameters: 100M, layers: 12, hidden: 768}\ndtype: fp32\nsequence_length: 1024\nmicro_batch: 8\n"
      "parallel: {ranks: 16, ranks_per_node: 8, dp: 16}\nsharding: zero1\nbucket: 25M\n",
      "zero1.yaml");
  return to_json(make_plan(w, {"A", "B"}, price, std::pair<std::string, std::string>{"A", "B"}));
}

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

TEST(PlanTable, Markdown) {
  const std::string md = report::plan_markdown(zero1_plan());
  EXPECT_TRUE(md.starts_with("## Plan: zero1 (zero1.yaml)\n\n- 100M parameters, 12 layers, hidden 768\n")) << md;
  EXPECT_TRUE(has(md, "- 16 ranks = 2 nodes x 8; tp 1, pp 1, dp 16, ep 1; sharding zero1, bucket 25 MiB\n")) << md;
  EXPECT_TRUE(has(md,
                  "| # | op | bytes per call | group | nodes | calls per step | overlaps compute | what |\n"
                  "| ---: | --- | ---: | ---: | ---: | ---: | --- | --- |\n"
                  "| 1 | allreduce | 23.8 MiB | 16 | 2 | 16 | yes | gradient all-reduce, per bucket |\n"
                  "| 2 | allgather | 23.8 MiB | 16 | 2 | 16 | no | parameter all-gather after the optimizer "
                  "step, per bucket |\n"))
      << md;
  // A: 16 x 260 us twice = 8.32 ms [7.49, 9.15]; the all-gather alone is not overlapped.
  EXPECT_TRUE(has(md, "| A | 8.32 [7.49, 9.15] | 4.16 [3.74, 4.58] |  |\n")) << md;
  EXPECT_TRUE(has(md, "| B | 4.32 [3.89, 4.75] | 2.16 [1.94, 2.38] | from spec |\n")) << md;
  EXPECT_TRUE(has(md, "| 2 | 4.16 [3.74, 4.58] | 2.16 [1.94, 2.38] |\n")) << md;
  EXPECT_TRUE(has(md, "**Migration A -> B (2 collectives priced on both)**")) << md;
  EXPECT_TRUE(has(md, "| all collectives | -4.00 [-5.26, -2.74] | 0.519x [0.425, 0.635] |\n")) << md;
  EXPECT_TRUE(has(md, "| not overlapped | -2.00 [-2.63, -1.37] | 0.519x [0.425, 0.635] |\n")) << md;
}

TEST(PlanTable, Html) {
  const std::string html = report::plan_html_page(zero1_plan());
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>")) << html;
  EXPECT_TRUE(has(html, "<h3>Migration A -&gt; B (2 collectives priced on both)</h3>")) << html;
  EXPECT_TRUE(has(html,
                  "<tr><td>A</td><td class=\"num\">8.32 [7.49, 9.15]</td><td class=\"num\">4.16 [3.74, "
                  "4.58]</td><td></td></tr>"))
      << html;
  EXPECT_TRUE(has(html, "<td>parameter all-gather after the optimizer step, per bucket</td>")) << html;
}

TEST(PlanTable, Text) {
  const std::string text = report::plan_text(zero1_plan());
  EXPECT_TRUE(has(text, "Communication time per step, ms (90% band):\n")) << text;
  EXPECT_TRUE(has(text, "  A       8.32 [7.49, 9.15] 4.16 [3.74, 4.58] \n")) << text;
}

TEST(PlanTable, RejectsOtherDocuments) {
  auto error = [](const nlohmann::json& j) {
    try {
      report::check_plan_document(j, "p.json");
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  nlohmann::json plan = zero1_plan();
  EXPECT_EQ(error(plan), "(no error)");
  plan["plan_version"] = 2;
  EXPECT_EQ(error(plan), "p.json: plan_version: is 2, this ccbench reads 1");
  EXPECT_EQ(error(nlohmann::json{{"schema_version", 1}}),
            "p.json: plan_version: missing (is this `ccbench model plan --format json` output?)");
  plan = zero1_plan();
  plan["profiles"][0]["rows"].erase(0);
  EXPECT_EQ(error(plan), "p.json: profiles[0].rows: expected one row per collective (2)");
}

}  // namespace
}  // namespace ccbench::model
