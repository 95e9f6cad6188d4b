// The rows' matrix (alltoallv --matrix, --moe) and sendrecv_pattern (--pattern) fields in every
// renderer: the exact cells, "-" (or "—", or empty) where a row lacks a value, and no columns,
// sections or metrics for files without them (golden_test.cpp holds those byte for byte).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "report/console_table.hpp"
#include "report/renderers.hpp"
#include "report/report_common.hpp"

namespace ccbench::report {
namespace {

ResultRow row(const std::string& op, std::uint64_t bytes, bool in_place, double median) {
  ResultRow r;
  r.op = op;
  r.backend = "mpi";
  r.dtype = "float";
  r.redop = "none";
  r.in_place = in_place;
  r.bytes = bytes;
  r.count = bytes / 4;
  r.ranks = 4;
  r.samples_us = {median};
  r.time_us = {median, median, median, median, median, median * 0.99, median * 1.01};
  r.algbw_gbps = static_cast<double>(bytes) / (median * 1e3);
  r.busbw_gbps = r.algbw_gbps;
  r.ci_target_met = true;
  return r;
}

// An alltoallv of two matrices (run --link-gbps: the first row has its bound; the second, from a
// file written without it, has none) and an allreduce beside it.
ResultFile matrix_file() {
  ResultFile f;
  f.run.status = "complete";
  f.run.label = "moe";
  f.system = {{"instance_type", "t"}, {"ranks", 4}};
  ResultRow a = row("alltoallv", 4096, false, 20.0);
  a.extra["matrix"] = {{"source", {{"moe", "8,2,64,128,hot:0:0.5"}, {"seed", 1}}},
                       {"imbalance", 1.756},
                       {"most_loaded_off_rank_bytes", 6144},
                       {"most_loaded_gbps", 0.3072},
                       {"bound_us", 0.49152}};
  ResultRow b = row("alltoallv", 8192, false, 40.0);
  b.extra["matrix"] = {{"imbalance", 2}, {"most_loaded_gbps", 12.5}};
  f.results = {a, b, row("allreduce", 4096, false, 10.0)};
  f.results.back().redop = "sum";
  return f;
}

// sendrecv many-to-one in groups of 4 with 1 KiB blocks: both variants of 4 KiB, out-of-place only
// of 8 KiB.
ResultFile pattern_file() {
  ResultFile f;
  f.run.status = "complete";
  f.run.label = "kv";
  f.system = {{"instance_type", "t"}, {"ranks", 4}};
  const auto pattern = [](double aggregate, double receiver) {
    return nlohmann::json{{"pattern", "many-to-one"},
                          {"peer_group", 4},
                          {"block_bytes", 1024},
                          {"aggregate_gbps", aggregate},
                          {"per_receiver_gbps", receiver}};
  };
  ResultRow a = row("sendrecv", 4096, false, 10.0);
  a.extra["sendrecv_pattern"] = pattern(1.2288, 1.2288);
  ResultRow b = row("sendrecv", 4096, true, 8.0);
  b.extra["sendrecv_pattern"] = pattern(1.536, 1.536);
  ResultRow c = row("sendrecv", 8192, false, 16.0);
  c.extra["sendrecv_pattern"] = pattern(1.536, 1.536);
  f.results = {a, b, c};
  return f;
}

ReportInput input_of(std::vector<ResultFile> files) {
  ReportInput in;
  in.files = std::move(files);
  return in;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    out.push_back(text.substr(pos, end - pos));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

// The line of `text` that starts with `prefix` (the first), or "<none>".
std::string line_starting(const std::string& text, const std::string& prefix) {
  for (const auto& line : lines_of(text)) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return "<none>";
}

TEST(RowFields, ReadTheMatrixAndPatternObjects) {
  const ResultFile m = matrix_file();
  const auto a = matrix_fields(m.results[0]);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->imbalance, 1.756);
  EXPECT_EQ(a->most_loaded_gbps, 0.3072);
  EXPECT_EQ(a->bound_us, 0.49152);
  const auto b = matrix_fields(m.results[1]);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->imbalance, 2.0);  // an integer in the JSON reads as a number too
  EXPECT_FALSE(b->bound_us);
  EXPECT_FALSE(matrix_fields(m.results[2]));
  EXPECT_FALSE(pattern_fields(m.results[2]));
  const auto p = pattern_fields(pattern_file().results[0]);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pattern, "many-to-one");
  EXPECT_EQ(p->peer_group, 4.0);
  EXPECT_EQ(p->block_bytes, 1024.0);
  EXPECT_EQ(p->aggregate_gbps, 1.2288);
  EXPECT_EQ(p->per_receiver_gbps, 1.2288);
  // Something else under the keys (a file from other hands) reads as absent, never throws.
  ResultRow odd = row("alltoallv", 8, false, 1.0);
  odd.extra["matrix"] = {{"imbalance", "high"}, {"most_loaded_gbps", nullptr}};
  odd.extra["sendrecv_pattern"] = "ring";
  const auto o = matrix_fields(odd);
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->imbalance);
  EXPECT_FALSE(o->most_loaded_gbps);
  EXPECT_FALSE(pattern_fields(odd));
}

TEST(RowFields, ConsoleTableAddsTheMatrixColumnsAfterTheOthers) {
  const ResultFile f = matrix_file();
  TableColumns columns;
  columns.include(f.results[0]);
  EXPECT_TRUE(columns.matrix);
  EXPECT_TRUE(columns.matrix_bound);
  EXPECT_FALSE(columns.sendrecv_pattern);
  const auto header = lines_of(table_header("alltoallv", 0, 1, columns));
  ASSERT_EQ(header.size(), 6u);
  const std::string plain_names =
      "#       size        count     type  redop  root      time   algbw   busbw #wrong     ci      time   algbw   "
      "busbw #wrong     ci";
  EXPECT_EQ(header[4], plain_names + "  imbal    loaded     bound  imbal    loaded     bound");
  EXPECT_TRUE(header[5].ends_with("(±%)           (GB/s)      (us)           (GB/s)      (us)")) << header[5];
  // Each variant's title over its 27 characters, as the percentile levels' titles.
  EXPECT_EQ(header[3].substr(header[3].size() - 54),
            std::string(15, ' ') + "out-of-place" + std::string(19, ' ') + "in-place");
  // Out-of-place then in-place; the in-place variant (a matrix op has none) and a missing bound "-".
  const std::string a = table_row(&f.results[0], nullptr, columns);
  EXPECT_EQ(a.substr(a.size() - 55), "   1.76      0.31      0.49      -         -         -\n");
  const std::string b = table_row(&f.results[1], nullptr, columns);
  EXPECT_EQ(b.substr(b.size() - 55), "   2.00     12.50         -      -         -         -\n");
  // Without a bound in any row, no bound column.
  TableColumns no_bound;
  no_bound.include(f.results[1]);
  EXPECT_FALSE(no_bound.matrix_bound);
  EXPECT_EQ(lines_of(table_header("alltoallv", 0, 1, no_bound))[4], plain_names + "  imbal    loaded  imbal    loaded");
  const std::string c = table_row(&f.results[1], nullptr, no_bound);
  EXPECT_EQ(c.substr(c.size() - 35), "   2.00     12.50      -         -\n");
}

TEST(RowFields, ConsoleTableAddsThePatternColumnsAfterTheOthers) {
  const ResultFile f = pattern_file();
  TableColumns columns;
  columns.percentiles = {99};
  for (const auto& r : f.results) columns.include(r);
  EXPECT_TRUE(columns.sendrecv_pattern);
  EXPECT_FALSE(columns.matrix);
  const auto header = lines_of(table_header("sendrecv", 0, 1, columns));
  // After the percentile level's columns (the row has none: "-").
  EXPECT_TRUE(header[4].ends_with("       p99     ci       p99     ci       agg      recv       agg      recv"))
      << header[4];
  EXPECT_TRUE(header[5].ends_with("(us)   (±%)    (GB/s)    (GB/s)    (GB/s)    (GB/s)")) << header[5];
  EXPECT_TRUE(table_row(&f.results[0], &f.results[1], columns)
                  .ends_with("         -      -         -      -      1.23      1.23      1.54      1.54\n"));
  EXPECT_TRUE(table_row(&f.results[2], nullptr, columns).ends_with("      1.54      1.54         -         -\n"));
}

TEST(RowFields, ReportTableShowsTheColumnsOnlyOnTablesWhoseRowsHaveThem) {
  const std::string text = render_table(input_of({matrix_file()}));
  const auto lines = lines_of(text);
  const auto title = std::ranges::find(lines, "# alltoallv (mpi)");
  ASSERT_NE(title, lines.end()) << text;
  EXPECT_TRUE((title + 3)->ends_with("  imbal    loaded     bound  imbal    loaded     bound")) << *(title + 3);
  EXPECT_EQ(
      line_starting(text, "        4096         1024"),
      "        4096         1024    float   none    -1     20.00    0.20    0.20      0    1.0         -       -  "
      "     -      -      -   1.76      0.31      0.49      -         -         -");
  EXPECT_EQ(
      line_starting(text, "        8192         2048"),
      "        8192         2048    float   none    -1     40.00    0.20    0.20      0    1.0         -       -  "
      "     -      -      -   2.00     12.50         -      -         -         -");
  // The allreduce beside it keeps nccl-tests' columns alone.
  const auto allreduce = std::ranges::find(lines, "# allreduce (mpi)");
  ASSERT_NE(allreduce, lines.end());
  EXPECT_TRUE((allreduce + 3)->ends_with("busbw #wrong     ci")) << *(allreduce + 3);
  EXPECT_TRUE((allreduce + 5)->ends_with("0    1.0         -       -       -      -      -")) << *(allreduce + 5);
  const std::string kv = render_table(input_of({pattern_file()}));
  EXPECT_TRUE(line_starting(kv, "        4096").ends_with("     0    1.0      1.23      1.23      1.54      1.54"));
  EXPECT_EQ(kv.find("imbal"), std::string::npos);
}

TEST(RowFields, CsvHasTheirColumnsWhenSomeRowHasThem) {
  const std::string csv = render_csv(input_of({matrix_file(), pattern_file()}));
  const auto lines = lines_of(csv);
  ASSERT_EQ(lines.size(), 1u + 6u);
  EXPECT_TRUE(
      lines[0].ends_with(",instance_type,matrix_imbalance,matrix_most_loaded_gbps,matrix_bound_us,"
                         "sendrecv_pattern,sendrecv_aggregate_gbps,sendrecv_per_receiver_gbps\r"))
      << lines[0];
  EXPECT_TRUE(lines[1].ends_with(",t,1.756,0.3072,0.49152,,,\r")) << lines[1];  // full precision
  EXPECT_TRUE(lines[2].ends_with(",t,2,12.5,,,,\r")) << lines[2];               // no bound: empty
  EXPECT_TRUE(lines[3].ends_with(",t,,,,,,\r")) << lines[3];                    // the allreduce
  EXPECT_TRUE(lines[4].ends_with(",t,,,,many-to-one,1.2288,1.2288\r")) << lines[4];
  EXPECT_TRUE(lines[6].ends_with(",t,,,,many-to-one,1.536,1.536\r")) << lines[6];
  // Only the set some row has.
  EXPECT_TRUE(lines_of(render_csv(input_of({pattern_file()})))[0].ends_with(
      ",instance_type,sendrecv_pattern,sendrecv_aggregate_gbps,sendrecv_per_receiver_gbps\r"));
}

TEST(RowFields, MarkdownHasASectionPerField) {
  const std::string md = render_markdown(input_of({matrix_file(), pattern_file()}));
  const std::string matrix =
      "### Expert-parallel and uneven all-to-all rows (run --matrix, --moe)\n\n"
      "| run | op | size | place | trial | imbalance | most-loaded GB/s | bound µs |\n"
      "|---|---|---:|---|---:|---:|---:|---:|\n"
      "| moe | alltoallv | 4 KiB | out-of-place | 0 | 1.756 | 0.3072 | 0.4915 |\n"
      "| moe | alltoallv | 8 KiB | out-of-place | 0 | 2.000 | 12.50 | — |\n\n";
  EXPECT_NE(md.find(matrix), std::string::npos) << md;
  const std::string pattern =
      "### Point-to-point patterns (run --pattern)\n\n"
      "| run | op | size | place | trial | pattern | peer group | block | aggregate GB/s | per-receiver GB/s |\n"
      "|---|---|---:|---|---:|---|---:|---:|---:|---:|\n"
      "| kv | sendrecv | 4 KiB | out-of-place | 0 | many-to-one | 4 | 1 KiB | 1.229 | 1.229 |\n"
      "| kv | sendrecv | 4 KiB | in-place | 0 | many-to-one | 4 | 1 KiB | 1.536 | 1.536 |\n"
      "| kv | sendrecv | 8 KiB | out-of-place | 0 | many-to-one | 4 | 1 KiB | 1.536 | 1.536 |\n\n";
  EXPECT_NE(md.find(pattern), std::string::npos) << md;
  // A file with one of them gets that section alone.
  const std::string only = render_markdown(input_of({pattern_file()}));
  EXPECT_EQ(only.find("Expert-parallel"), std::string::npos);
  EXPECT_NE(only.find("Point-to-point patterns"), std::string::npos);
}

TEST(RowFields, HtmlHasASectionPerFieldWithEscapedText) {
  ResultFile m = matrix_file();
  m.run.label = "<moe & co>";
  const std::string html = render_html(input_of({m, pattern_file()}));
  EXPECT_NE(html.find("<section id=\"matrix\">\n<h2>Expert-parallel and uneven all-to-all rows</h2>\n"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><th>run</th><th>op</th><th>size</th><th>place</th><th>trial</th><th>imbalance</th>"
                      "<th>most-loaded GB/s</th><th>bound µs</th></tr>\n"
                      "<tr><td>&lt;moe &amp; co&gt;</td><td>alltoallv</td><td>4 KiB</td><td>out-of-place</td>"
                      "<td>0</td><td>1.756</td><td>0.3072</td><td>0.4915</td></tr>\n"
                      "<tr><td>&lt;moe &amp; co&gt;</td><td>alltoallv</td><td>8 KiB</td><td>out-of-place</td>"
                      "<td>0</td><td>2.000</td><td>12.50</td><td>—</td></tr>\n</table>\n</section>\n"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<section id=\"sendrecv-patterns\">\n<h2>Point-to-point patterns</h2>\n"), std::string::npos);
  EXPECT_NE(html.find("<th>pattern</th><th>peer group</th><th>block</th><th>aggregate GB/s</th>"
                      "<th>per-receiver GB/s</th></tr>\n<tr><td>kv</td><td>sendrecv</td><td>4 KiB</td>"
                      "<td>out-of-place</td><td>0</td><td>many-to-one</td><td>4</td><td>1 KiB</td><td>1.229</td>"
                      "<td>1.229</td></tr>\n"),
            std::string::npos);
  EXPECT_EQ(html.find("<moe"), std::string::npos);
  const std::string only = render_html(input_of({matrix_file()}));
  EXPECT_EQ(only.find("id=\"sendrecv-patterns\""), std::string::npos);
}

TEST(RowFields, PrometheusHasAGaugePerFieldWithTheRowsLabels) {
  const std::string text = render_prometheus(input_of({matrix_file(), pattern_file()}));
  const std::string a2av =
      "{label=\"moe\",instance_type=\"t\",op=\"alltoallv\",backend=\"mpi\",dtype=\"float\",redop=\"none\","
      "in_place=\"false\",ranks=\"4\",trial=\"0\"";
  const auto labels = [](const std::string& rest, std::uint64_t bytes) {
    // The row's labels in the renderer's order: bytes between in_place and ranks.
    const std::size_t at = rest.find(",ranks=");
    return rest.substr(0, at) + ",bytes=\"" + std::to_string(bytes) + "\"" + rest.substr(at) + "}";
  };
  EXPECT_NE(text.find("# TYPE ccbench_matrix_imbalance gauge\nccbench_matrix_imbalance" + labels(a2av, 4096) +
                      " 1.756\nccbench_matrix_imbalance" + labels(a2av, 8192) + " 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ccbench_most_loaded_gbps" + labels(a2av, 4096) + " 0.3072\n"), std::string::npos);
  EXPECT_NE(text.find("ccbench_most_loaded_gbps" + labels(a2av, 8192) + " 12.5\n"), std::string::npos);
  const std::string kv_in =
      "{label=\"kv\",instance_type=\"t\",op=\"sendrecv\",backend=\"mpi\",dtype=\"float\",redop=\"none\","
      "in_place=\"true\",ranks=\"4\",trial=\"0\"";
  EXPECT_NE(text.find("ccbench_sendrecv_aggregate_gbps" + labels(kv_in, 4096) + " 1.536\n"), std::string::npos);
  EXPECT_NE(text.find("ccbench_sendrecv_per_receiver_gbps" + labels(kv_in, 4096) + " 1.536\n"), std::string::npos);
  // Rows without the field have no sample: 2 imbalance samples, 3 aggregate ones.
  const auto count = [&](const std::string& metric) {
    std::size_t n = 0;
    for (const auto& line : lines_of(text)) n += line.rfind(metric + "{", 0) == 0 ? 1 : 0;
    return n;
  };
  EXPECT_EQ(count("ccbench_matrix_imbalance"), 2u);
  EXPECT_EQ(count("ccbench_most_loaded_gbps"), 2u);
  EXPECT_EQ(count("ccbench_sendrecv_aggregate_gbps"), 3u);
  EXPECT_EQ(count("ccbench_sendrecv_per_receiver_gbps"), 3u);
  // A file without a field declares no family for it.
  const std::string plain = render_prometheus(input_of({pattern_file()}));
  EXPECT_EQ(plain.find("ccbench_matrix_imbalance"), std::string::npos);
  EXPECT_EQ(plain.find("ccbench_most_loaded_gbps"), std::string::npos);
}

TEST(RowFields, GbenchCarriesThemAsUserCounters) {
  const auto j = nlohmann::json::parse(render_gbench(input_of({matrix_file(), pattern_file()})));
  const auto& b = j["benchmarks"];
  ASSERT_EQ(b.size(), 6u);
  EXPECT_EQ(b[0]["name"], "moe:alltoallv/float/none/out/4096");
  EXPECT_EQ(b[0]["matrix_imbalance"], 1.756);
  EXPECT_EQ(b[0]["matrix_most_loaded_gbps"], 0.3072);
  EXPECT_EQ(b[0]["matrix_bound_us"], 0.49152);
  EXPECT_FALSE(b[1].contains("matrix_bound_us"));  // the row has no bound
  EXPECT_EQ(b[1]["matrix_most_loaded_gbps"], 12.5);
  for (const char* key : {"matrix_imbalance", "sendrecv_aggregate_gbps"}) EXPECT_FALSE(b[2].contains(key)) << key;
  EXPECT_EQ(b[4]["sendrecv_aggregate_gbps"], 1.536);
  EXPECT_EQ(b[4]["sendrecv_per_receiver_gbps"], 1.536);
  EXPECT_FALSE(b[4].contains("matrix_imbalance"));
}

}  // namespace
}  // namespace ccbench::report
