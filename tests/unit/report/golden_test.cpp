// Outputs that must not change by accident: each format of a file without the matrix and
// sendrecv_pattern fields, byte for byte as before those fields were shown.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "report/renderers.hpp"

namespace ccbench::report {
namespace {

ResultRow plain_row(const std::string& op, std::uint64_t bytes, bool in_place, int trial, double median) {
  ResultRow r;
  r.op = op;
  r.backend = "mpi";
  r.dtype = "float";
  r.redop = op == "allreduce" ? "sum" : "none";
  r.in_place = in_place;
  r.bytes = bytes;
  r.count = bytes / 4;
  r.ranks = 4;
  r.trial = trial;
  r.batch = 1;
  r.samples_kind = "op";
  r.samples_us = {median * 0.9, median, median * 1.2};
  r.time_us = {median * 0.9, median, median * 1.05, median * 1.2, median * 1.2, median * 0.95, median * 1.1};
  r.algbw_gbps = static_cast<double>(bytes) / (median * 1e3);
  r.busbw_gbps = r.algbw_gbps * 1.5;
  r.ci_target_met = true;
  return r;
}

// Rows of every kind the renderers showed before the matrix and pattern fields: plain, --groups
// (the aggregate columns) and --percentiles (a level with a CI, one without), both variants.
ResultFile file_without_new_fields() {
  ResultFile f;
  f.run.status = "complete";
  f.run.label = "plain";
  f.run.started_at = "2026-12-01T10:00:00Z";
  f.run.finished_at = "2026-12-01T10:01:00.5Z";
  f.source = "runs/plain.json";
  f.system = {{"instance_type", "p5en.48xlarge"}, {"nodes", 1}, {"ranks", 4}};
  for (const bool in_place : {false, true}) {
    for (const std::uint64_t bytes : {1024u, 4096u}) {
      ResultRow r = plain_row("allreduce", bytes, in_place, 0, bytes == 1024 ? 10.0 : 20.0);
      r.extra["groups"] = {{"busbw_gbps_aggregate", 0.25 * static_cast<double>(bytes) / 1024}};
      r.extra["percentiles_us"] = {{"p50", {{"value", 10.5}, {"ci95", {10.0, 11.0}}}},
                                   {"p99", {{"value", 12.5}, {"ci95", nullptr}}}};
      f.results.push_back(r);
    }
  }
  f.results.push_back(plain_row("alltoall", 4096, false, 0, 30.0));
  return f;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The same rows without --groups or --percentiles: nccl-tests' columns alone.
ResultFile bare_file() {
  ResultFile f = file_without_new_fields();
  f.run.label = "bare";
  f.source = "runs/bare.json";
  for (auto& r : f.results) r.extra = nlohmann::json::object();
  return f;
}

// tests/data/report/golden/ holds each format's output of these files from before the matrix and
// pattern columns existed. CCBENCH_UPDATE_GOLDEN=1 rewrites the files (for a renderer change that
// is meant to alter them: review their diff).
TEST(Golden, FilesWithoutMatrixOrPatternFieldsRenderAsBefore) {
  const std::filesystem::path dir = std::filesystem::path(CCBENCH_TEST_DATA) / "golden";
  const bool update = std::getenv("CCBENCH_UPDATE_GOLDEN") != nullptr;
  for (const ResultFile& file : {file_without_new_fields(), bare_file()}) {
    ReportInput in;
    in.files = {file};
    for (const auto& [format, extension] :
         std::vector<std::pair<Format, std::string>>{{Format::table, "txt"},
                                                     {Format::markdown, "md"},
                                                     {Format::csv, "csv"},
                                                     {Format::html, "html"},
                                                     {Format::prometheus, "prom"},
                                                     {Format::gbench, "gbench.json"}}) {
      const std::filesystem::path path = dir / (file.run.label + "." + extension);
      const std::string text = render(format, in);
      if (update) {
        std::filesystem::create_directories(dir);
        std::ofstream(path, std::ios::binary) << text;
        continue;
      }
      ASSERT_TRUE(std::filesystem::exists(path)) << path;
      EXPECT_EQ(text, read_text(path)) << name(format) << " differs from " << path;
    }
  }
}

}  // namespace
}  // namespace ccbench::report
