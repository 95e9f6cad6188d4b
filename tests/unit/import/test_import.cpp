#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "import/import.hpp"
#include "core/error.hpp"

namespace ccbench::importer {
namespace {

namespace fs = std::filesystem;
const fs::path kData = fs::path(CCBENCH_SOURCE_DIR) / "tests/data/compare";

fs::path write_temp(const std::string& name, const std::string& text) {
  const auto dir = fs::temp_directory_path() / "ccbench-import-tests";
  fs::create_directories(dir);
  const auto p = dir / name;
  std::ofstream(p) << text;
  return p;
}

// The logged busbw is rounded to 2 decimals (or fewer digits past 1000): ours, from the logged
// time, must agree to that precision.
void expect_busbw_reproduced(const ResultFile& f) {
  int checked = 0;
  for (const auto& r : f.results) {
    const double reported = r.extra.at("reported_busbw_gbps").get<double>();
    const double tol = reported >= 1000 ? 0.5 : reported >= 100 ? 0.05 : 0.005;
    EXPECT_NEAR(r.busbw_gbps, reported, tol + 1e-3 * reported) << r.op << " " << r.bytes;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(ImportNcclTests, TextTableReproducesBusbw) {
  const auto imported = import_nccl_tests(kData / "nccl-tests-allreduce.txt", {});
  const ResultFile& f = imported.file;
  EXPECT_TRUE(imported.warnings.empty());
  ASSERT_EQ(f.results.size(), 20u);  // 10 sizes x (out-of-place, in-place)
  EXPECT_EQ(f.results[0].op, "allreduce");
  EXPECT_EQ(f.results[0].dtype, "float");
  EXPECT_EQ(f.results[0].redop, "sum");
  EXPECT_EQ(f.results[0].ranks, 16);
  EXPECT_EQ(f.results[0].bytes, 8u);
  EXPECT_FALSE(f.results[0].in_place);
  EXPECT_TRUE(f.results[1].in_place);
  EXPECT_EQ(f.results[0].samples_kind, "summary");
  EXPECT_EQ(f.results[0].samples_us.size(), 1u);
  EXPECT_DOUBLE_EQ(f.results[0].samples_us[0], f.results[0].time_us.median);
  expect_busbw_reproduced(f);
  EXPECT_EQ(f.system["ranks_per_node"], 8);
  EXPECT_EQ(f.system["nodes"], 2);
  EXPECT_EQ(f.system["hosts"][1]["gpus"][0]["name"], "NVIDIA H200");
  EXPECT_EQ(f.software["nccl"], "2.26.2");
  EXPECT_EQ(f.fabric["provider"], "efa");
  EXPECT_EQ(f.config["timing"]["method"], "nccl-tests");
  EXPECT_EQ(f.config["iters"], 20);
  // A summary row must not carry a CI that looks real.
  const auto j = imported_to_json(f);
  EXPECT_TRUE(j["results"][0]["time_us"]["ci95"].is_null());
}

TEST(ImportNcclTests, MpirunPrefixesGiveTheSameRows) {
  const auto plain = import_nccl_tests(kData / "nccl-tests-allreduce.txt", {}).file;
  const auto prefixed = import_nccl_tests(kData / "nccl-tests-allreduce-mpirun.txt", {}).file;
  ASSERT_EQ(plain.results.size(), prefixed.results.size());
  for (std::size_t i = 0; i < plain.results.size(); ++i) {
    EXPECT_EQ(plain.results[i].bytes, prefixed.results[i].bytes);
    EXPECT_DOUBLE_EQ(plain.results[i].time_us.median, prefixed.results[i].time_us.median);
    EXPECT_EQ(plain.results[i].ranks, prefixed.results[i].ranks);
  }
}

TEST(ImportNcclTests, JsonOutputReproducesBusbw) {
  const auto imported = import_nccl_tests(kData / "nccl-tests-allreduce.json", {});
  const ResultFile& f = imported.file;
  ASSERT_EQ(f.results.size(), 12u);
  EXPECT_EQ(f.results[0].op, "allreduce");
  EXPECT_EQ(f.results[0].ranks, 8);
  EXPECT_EQ(f.results[0].root, -1);
  EXPECT_EQ(f.software["nccl"], "2.27.3");
  EXPECT_EQ(f.system["hosts"][0]["gpus"][0]["name"], "NVIDIA B200");
  expect_busbw_reproduced(f);
}

TEST(ImportNcclTests, ConcatenatedRunsBecomeTrials) {
  std::ifstream in(kData / "nccl-tests-allreduce.txt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto p = write_temp("twice.txt", text + "\n" + text);
  const auto f = import_nccl_tests(p, {}).file;
  ASSERT_EQ(f.results.size(), 40u);
  EXPECT_EQ(f.results[0].trial, 0);
  EXPECT_EQ(f.results[20].trial, 1);
}

TEST(ImportNcclTests, WrongRankCountIsFlagged) {
  ImportOptions o;
  o.ranks = 4;
  const auto imported = import_nccl_tests(kData / "nccl-tests-allreduce.txt", o);
  ASSERT_FALSE(imported.warnings.empty());
  EXPECT_NE(imported.warnings[0].find("--ranks"), std::string::npos);
}

std::string import_error(const fs::path& p, const ImportOptions& o = {}, bool osu = false) {
  try {
    if (osu) {
      import_osu(p, o);
    } else {
      import_nccl_tests(p, o);
    }
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(ImportNcclTests, BadInput) {
  const std::string header =
      "# Collective test starting: all_reduce_perf\n"
      "#  Rank  0 Group  0 Pid   4100 on h device  0 [0000:53:00] NVIDIA H200\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong\n";
  auto msg =
      import_error(write_temp("nan.txt", header + "  1024  256  float  sum  -1  nan  0.1  0.1  0  2.0  0.5  0.5  0\n"));
  EXPECT_NE(msg.find("nan.txt:4"), std::string::npos) << msg;
  msg = import_error(
      write_temp("neg.txt", header + "  1024  256  float  sum  -1  -3.0  0.1  0.1  0  2.0  0.5  0.5  0\n"));
  EXPECT_NE(msg.find("neg.txt:4"), std::string::npos) << msg;
  msg = import_error(write_temp("trunc.txt", header + "  1024  256  float  sum  -1  3.0  0.1\n"));
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  msg = import_error(write_temp("norows.txt", header));
  EXPECT_NE(msg.find("no nccl-tests result rows"), std::string::npos) << msg;
  msg = import_error(write_temp("empty.txt", ""));
  EXPECT_NE(msg.find("empty"), std::string::npos) << msg;
  msg = import_error(write_temp("bad.json", "{\"results\": [ {\"size\": 8, "));
  EXPECT_NE(msg.find("bad.json:1"), std::string::npos) << msg;
  msg = import_error(write_temp("nanjson.json",
                                R"({"args":["all_reduce_perf"],"config":{"devices":[{},{}]},"results":[{"size":8,)"
                                R"("out_of_place":{"time":"nan","alg_bw":0,"bus_bw":0}}]})"));
  EXPECT_NE(msg.find("/results/0/out_of_place/time"), std::string::npos) << msg;
  msg = import_error(write_temp("noop.txt",
                                "#  Rank  0 Group  0 Pid   4100 on h device  0 [0000:53:00] NVIDIA H200\n"
                                "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
                                "  1024  256  float  sum  -1  3.0  0.1  0.1  0\n"));
  EXPECT_NE(msg.find("--op"), std::string::npos) << msg;
}

TEST(ImportOsu, AverageLatencyColumn) {
  ImportOptions o;
  o.ranks = 2;
  const auto f = import_osu(kData / "osu-allreduce.txt", o).file;
  ASSERT_EQ(f.results.size(), 19u);  // 4 B .. 1 MiB
  EXPECT_EQ(f.results[0].op, "allreduce");
  EXPECT_EQ(f.results[0].bytes, 4u);
  EXPECT_EQ(f.results[0].ranks, 2);
  EXPECT_DOUBLE_EQ(f.results[0].time_us.median, 0.19);
  EXPECT_EQ(f.results[0].samples_kind, "summary");
  EXPECT_EQ(f.config["timing"]["method"], "osu");
  // busbw from the latency: 2(n-1)/n * bytes / time.
  const auto& last = f.results.back();
  EXPECT_NEAR(last.busbw_gbps, 1.0 * static_cast<double>(last.bytes) / (last.time_us.median * 1e3), 1e-9);
}

TEST(ImportOsu, FullColumnsKeepMinMaxAndIterations) {
  ImportOptions o;
  o.ranks = 2;
  const auto f = import_osu(kData / "osu-allreduce-full.txt", o).file;
  ASSERT_EQ(f.results.size(), 19u);
  EXPECT_DOUBLE_EQ(f.results[0].time_us.median, 0.19);
  EXPECT_DOUBLE_EQ(f.results[0].time_us.min, 0.17);
  EXPECT_DOUBLE_EQ(f.results[0].time_us.max, 0.20);
  EXPECT_EQ(f.results[0].extra["osu_iterations"], 1000);
}

TEST(ImportOsu, BadInput) {
  EXPECT_NE(import_error(kData / "osu-allreduce.txt", {}, true).find("--ranks"), std::string::npos);
  ImportOptions o;
  o.ranks = 2;
  const std::string head = "# OSU MPI Allreduce Latency Test v7.4\n# Size       Avg Latency(us)\n";
  auto msg = import_error(write_temp("osu-neg.txt", head + "4    -1.0\n"), o, true);
  EXPECT_NE(msg.find("osu-neg.txt:3"), std::string::npos) << msg;
  msg = import_error(write_temp("osu-none.txt", "hello\n"), o, true);
  EXPECT_NE(msg.find("no OSU result rows"), std::string::npos) << msg;
  msg = import_error(write_temp("osu-odd.txt", "# OSU MPI Foo Latency Test v7.4\n"), o, true);
  EXPECT_NE(msg.find("unsupported OSU test"), std::string::npos) << msg;
}

}  // namespace
}  // namespace ccbench::importer
