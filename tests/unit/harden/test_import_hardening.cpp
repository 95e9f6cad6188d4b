// Importers (issue 15 items 8, 9, 13, 17): sizes and counts that are not finite whole numbers in
// range are exit 2 naming the line; a Latin-1 byte is named by file and line and recorded escaped;
// the log's own busbw and algbw are kept; the streamed text output equals the JSON tree's dump.
#include "import/import.hpp"
#include "test_support.hpp"

namespace ccbench::harden_test {
namespace {

namespace fs = std::filesystem;
using importer::import_nccl_tests;
using importer::import_osu;

const fs::path kData = fs::path(CCBENCH_SOURCE_DIR) / "tests/data/compare";

// The nccl-tests sample with line `line` (1-based) replaced by `text`.
fs::path nccl_with_line(const std::string& name, int line, const std::string& text) {
  std::ifstream in(kData / "nccl-tests-allreduce.txt");
  std::string out, l;
  for (int n = 1; std::getline(in, l); ++n) out += (n == line ? text : l) + "\n";
  return write(fresh_dir("import-" + name) / "all_reduce.txt", out);
}

std::string import_error(const fs::path& p, bool osu = false) {
  importer::ImportOptions o;
  o.ranks = 2;
  return error_of([&] { osu ? import_osu(p, o) : import_nccl_tests(p, {}); });
}

TEST(ImportHardening, NonFiniteOrHugeSizesAreRefusedNamingTheLine) {
  // Line 28 is the 8-byte row of the sample log.
  const std::string rest =
      "             2     float     sum      -1    38.04    0.00    0.00       0    38.48    0.00    0.00       0";
  for (const std::string size : {"inf", "nan", "1e30", "9223372036854775807", "-8", "8.5", "2251799813685249"}) {
    const auto p =
        nccl_with_line("size", 28, std::string(12 - std::min<std::size_t>(12, size.size()), ' ') + size + rest);
    EXPECT_EQ(import_error(p), p.string() + ":28: size '" + size + "' must be a whole number of bytes from 1 to 2^50")
        << size;
  }
  const auto count = nccl_with_line("count", 28,
                                    "           8          1e30     float     sum      -1    38.04    0.00    0.00     "
                                    "  0    38.48    0.00    0.00       0");
  EXPECT_EQ(import_error(count), count.string() + ":28: count '1e30' must be a whole number up to 2^50");
  const auto wrong = nccl_with_line("wrong", 28,
                                    "           8             2     float     sum      -1    38.04    0.00    0.00     "
                                    "inf    38.48    0.00    0.00       0");
  EXPECT_EQ(import_error(wrong), wrong.string() + ":28: #wrong 'inf' must be a whole number");
  const auto threads = nccl_with_line("nthread", 3,
                                      "# nThread 99999999999999999999 nGpus 1 minBytes 8 maxBytes 1073741824 step: "
                                      "8(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0");
  EXPECT_EQ(import_error(threads),
            threads.string() + ":3: nThread '99999999999999999999' is not a whole number up to 10^9");
}

TEST(ImportHardening, OsuSizesBeyondRangeAreRefused) {
  const auto dir = fresh_dir("import-osu");
  const std::string head =
      "# OSU MPI Allgather Latency Test v7.4\n# Datatype: MPI_FLOAT.\n# Size       Avg Latency(us)\n";
  const auto p = write(dir / "osu.txt", head + "4                       0.19\n9223372036854775807     0.19\n");
  EXPECT_EQ(import_error(p, true),
            p.string() +
                ":5: size '9223372036854775807' must be a whole number of bytes from 1 to 2^50 (times the rank count)");
  const auto q = write(dir / "osu2.txt", head + "inf     0.19\n");
  EXPECT_EQ(import_error(q, true),
            q.string() + ":4: size 'inf' must be a whole number of bytes from 1 to 2^50 (times the rank count)");
  const auto r = write(dir / "osu3.txt", head + "1e30     0.19\n");
  EXPECT_EQ(import_error(r, true),
            r.string() + ":4: size '1e30' must be a whole number of bytes from 1 to 2^50 (times the rank count)");
}

TEST(ImportHardening, Latin1IsNamedAndRecordedEscaped) {
  const auto p =
      nccl_with_line("latin1", 8, "#  Rank  0 Group  0 Pid   4100 on ip-10-1-0-11 device  0 [0000:53:00] NVIDIA H\xe9");
  const auto imported = import_nccl_tests(p, {});
  ASSERT_FALSE(imported.warnings.empty());
  EXPECT_EQ(imported.warnings[0],
            p.string() + ":8: not UTF-8 (a Latin-1 byte?); text from it is recorded with \\xNN escapes");
  const auto doc = nlohmann::json::parse(importer::imported_text(imported.file));
  EXPECT_EQ(doc["system"]["hosts"][0]["gpus"][0]["name"], "NVIDIA H\\xE9");
  EXPECT_EQ(doc["run"]["non_utf8_escaped"], nlohmann::json::array({"/system/hosts/0/gpus/0/name"}));
}

TEST(ImportHardening, TheLogsOwnBandwidthIsKept) {
  // 8-byte row: 38.04 us; nccl-tests printed algbw 0.00 and busbw 0.00; the 2 MiB row 42.62 and 79.91.
  const auto imported = import_nccl_tests(kData / "nccl-tests-allreduce.txt", {});
  for (const auto& r : imported.file.results) {
    EXPECT_EQ(r.busbw_gbps, r.extra.at("reported_busbw_gbps").get<double>()) << r.bytes;
    EXPECT_EQ(r.algbw_gbps, r.extra.at("reported_algbw_gbps").get<double>()) << r.bytes;
  }
  EXPECT_EQ(imported.file.results[12].bytes, 2097152u);
  EXPECT_EQ(imported.file.results[12].busbw_gbps, 79.91);
  EXPECT_EQ(imported.file.results[12].algbw_gbps, 42.62);
}

TEST(ImportHardening, StreamedTextEqualsTheTreesDump) {
  for (const char* name :
       {"nccl-tests-allreduce.txt", "nccl-tests-allreduce-mpirun.txt", "nccl-tests-allreduce.json"}) {
    const auto imported = import_nccl_tests(kData / name, {});
    EXPECT_EQ(importer::imported_text(imported.file), importer::imported_to_json(imported.file).dump(1) + "\n") << name;
  }
  importer::ImportOptions o;
  o.ranks = 4;
  const auto osu = import_osu(kData / "osu-allreduce-full.txt", o);
  EXPECT_EQ(importer::imported_text(osu.file), importer::imported_to_json(osu.file).dump(1) + "\n");
}

TEST(ImportHardening, JsonNumberOverflowNamesTheFile) {
  const auto p = write(fresh_dir("import-json") / "r.json", R"({"results": [{"size": 1e999}]})");
  EXPECT_EQ(import_error(p).rfind(p.string() + ": malformed JSON (", 0), 0u) << import_error(p);
}

}  // namespace
}  // namespace ccbench::harden_test
