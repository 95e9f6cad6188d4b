#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/result.hpp"
#include "core/result_stream.hpp"

namespace ccbench {
namespace {

namespace fs = std::filesystem;

ResultRow sample_row(int trial) {
  ResultRow r;
  r.op = "allreduce";
  r.backend = "mpi";
  r.dtype = "float";
  r.redop = "sum";
  r.in_place = trial % 2 == 1;
  r.bytes = 1048576;
  r.count = 262144;
  r.ranks = 2;
  r.trial = trial;
  r.samples_us = {101.5, 99.25, 100.0};
  r.batch = 1;
  r.time_us = {99.25, 100.0, 100.25, 101.5, 101.5, 99.25, 101.5};
  r.algbw_gbps = 10.48576;
  r.busbw_gbps = 10.48576;
  r.wrong = 0;
  r.ci_target_met = true;
  r.extra = {{"note", "kept"}};
  return r;
}

fs::path temp_dir() {
  const fs::path dir = fs::temp_directory_path() / ("ccbench_json_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

TEST(ResultJson, RoundTripKeepsEveryField) {
  ResultFile f;
  f.tool = {{"name", "ccbench"}, {"version", "0.1.0"}, {"git", "abc"}};
  f.run.status = "complete";
  f.run.command = {"ccbench run", "-b", "8"};
  f.run.label = "lab";
  f.run.error = "none really";
  f.run.peak_rss_bytes = 123456;
  f.system = {{"instance_type", "p5en.48xlarge"}, {"nodes", 2}};
  f.fabric = {{"path", "efa"}, {"link_gbps", 3200}};
  f.config = {{"dtype", "float"}};
  f.results = {sample_row(0), sample_row(1)};
  const nlohmann::json j = to_json(f);
  const ResultFile back = file_from_json(j, "mem");
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.results[1].extra["note"], "kept");
  EXPECT_EQ(back.run.peak_rss_bytes, 123456u);
  EXPECT_DOUBLE_EQ(back.results[0].time_us.ci95_hi, 101.5);
}

TEST(ResultJson, BadInputNamesFileAndPath) {
  nlohmann::json j = to_json(ResultFile{});
  j["results"] = nlohmann::json::array({to_json(sample_row(0))});
  auto expect_error = [](const nlohmann::json& doc, const std::string& needle) {
    try {
      file_from_json(doc, "runs/a.json");
      FAIL() << "accepted: " << needle;
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto bad = j;
  bad["schema_version"] = 2;
  expect_error(bad, "runs/a.json: /schema_version: unsupported schema version 2");
  bad = j;
  bad["results"][0]["time_us"]["median"] = -1.0;
  expect_error(bad, "/results/0/time_us/median: must not be negative");
  bad = j;
  bad["results"][0]["samples_us"][1] = "NaN";
  expect_error(bad, "/results/0/samples_us/1: must be a number");
  bad = j;
  bad["results"][0].erase("bytes");
  expect_error(bad, "/results/0/bytes: missing field");
  bad = j;
  bad["run"]["status"] = "done";
  expect_error(bad, "/run/status");
}

TEST(ResultFileIo, AtomicWriteAndTruncatedFileLineNumber) {
  const fs::path dir = temp_dir();
  const fs::path path = dir / "r.json";
  ResultFile f;
  f.run.status = "complete";
  f.results = {sample_row(0)};
  write_file_atomically(path, to_json(f).dump(1));
  EXPECT_EQ(load_result_file(path).results.size(), 1u);
  // No temporary files left behind.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1);
  // Truncate it.
  const std::string text = to_json(f).dump(1);
  std::ofstream(path) << text.substr(0, text.size() / 2);
  try {
    load_result_file(path);
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path.string() + ":"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(ResultFileIo, IncompleteFileTakesRowsFromItsStream) {
  const fs::path dir = temp_dir();
  const fs::path path = dir / "out.json";
  ResultFile f;  // status incomplete, no rows: what a killed run leaves
  write_file_atomically(path, to_json(f).dump());
  {
    ResultStream stream(jsonl_path_for(path));
    stream.append(sample_row(0));
    stream.append(sample_row(1));
  }
  EXPECT_EQ(jsonl_path_for(path), dir / "out.jsonl");
  // A torn last line (killed mid-write) is ignored.
  std::ofstream(jsonl_path_for(path), std::ios::app) << "{\"op\": \"allre";
  const ResultFile loaded = load_result_file(path);
  EXPECT_EQ(loaded.run.status, "incomplete");
  ASSERT_EQ(loaded.results.size(), 2u);
  EXPECT_EQ(loaded.results[1].trial, 1);
  EXPECT_EQ(load_result_file(jsonl_path_for(path)).results.size(), 2u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ccbench
