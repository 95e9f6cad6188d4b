#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "compare/load.hpp"
#include "core/error.hpp"
#include "generate.hpp"

namespace ccbench::compare {
namespace {

namespace fs = std::filesystem;

class Load : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ccbench-load-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  fs::path write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  std::string valid() {
    testing::RunModel m;
    m.ops = {"allreduce"};
    m.sizes = {1024};
    m.trials = 1;
    m.samples = 3;
    return to_json(testing::make_result_file(m)).dump(1);
  }
  std::string error_of(const fs::path& p) {
    try {
      load_side("baseline", {p.string()});
    } catch (const ParseError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(Load, MalformedJsonNamesFileAndLine) {
  const auto msg = error_of(write("bad.json", "{\n \"schema_version\": 1,\n \"results\": [}\n"));
  EXPECT_NE(msg.find("bad.json:3"), std::string::npos) << msg;
}

TEST_F(Load, TruncatedFile) {
  const auto text = valid();
  const auto msg = error_of(write("cut.json", text.substr(0, text.size() / 2)));
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST_F(Load, WrongSchemaVersion) {
  auto j = nlohmann::json::parse(valid());
  j["schema_version"] = 7;
  const auto msg = error_of(write("v7.json", j.dump()));
  EXPECT_NE(msg.find("/schema_version"), std::string::npos) << msg;
}

TEST_F(Load, MissingField) {
  auto j = nlohmann::json::parse(valid());
  j["results"][0].erase("op");
  const auto msg = error_of(write("noop.json", j.dump()));
  EXPECT_NE(msg.find("/results/0/op: missing field"), std::string::npos) << msg;
}

TEST_F(Load, NegativeZeroAndNonNumericTimes) {
  auto j = nlohmann::json::parse(valid());
  j["results"][0]["samples_us"][1] = -2.5;
  auto msg = error_of(write("neg.json", j.dump()));
  EXPECT_NE(msg.find("/results/0/samples_us/1"), std::string::npos) << msg;
  j["results"][0]["samples_us"][1] = 0.0;
  msg = error_of(write("zero.json", j.dump()));
  EXPECT_NE(msg.find("/results/0/samples_us/1: must be a positive time"), std::string::npos) << msg;
  j["results"][0]["samples_us"][1] = "nan";
  msg = error_of(write("nan.json", j.dump()));
  EXPECT_NE(msg.find("/results/0/samples_us/1"), std::string::npos) << msg;
  // A bare NaN token is not JSON at all.
  std::string text = valid();
  text.replace(text.find("\"samples_us\": [") + 15, 0, "NaN, ");
  msg = error_of(write("nantoken.json", text));
  EXPECT_NE(msg.find("nantoken.json:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("malformed JSON"), std::string::npos) << msg;
}

// Issue 37 item 6: a denormal time (5e-324) gave compare an infinite ratio, "+-nan%" and a pass.
TEST_F(Load, TimesBelowAPicosecondAreRefused) {
  auto j = nlohmann::json::parse(valid());
  j["results"][0]["samples_us"][2] = 5e-324;
  auto msg = error_of(write("denormal.json", j.dump()));
  EXPECT_NE(msg.find("/results/0/samples_us/2: 4.94066e-324 us is below a picosecond: not a measured time"),
            std::string::npos)
      << msg;
  j = nlohmann::json::parse(valid());
  j["results"][0]["samples_us"] = nlohmann::json::array();
  j["results"][0]["time_us"]["median"] = 1e-9;
  msg = error_of(write("median.json", j.dump()));
  EXPECT_NE(msg.find("/results/0/time_us/median: 1e-09 us is below a picosecond"), std::string::npos) << msg;
  j["results"][0]["time_us"]["median"] = 1e-6;  // a picosecond itself is a time
  EXPECT_EQ(error_of(write("ps.json", j.dump())), "");
}

// Issue 37 item 6: a folder given twice (or a folder and a file in it) counted each launch twice:
// 3 launches a side read as 6 turned an inconclusive comparison into a confirmed one.
TEST_F(Load, AFileReadTwiceOnOneSideIsRefused) {
  fs::create_directories(dir_ / "runs");
  write("runs/a.json", valid());
  write("runs/b.json", valid());
  const std::string runs = (dir_ / "runs").string();
  const std::string a = (dir_ / "runs" / "a.json").string();
  const auto message = [&](const std::vector<std::string>& inputs) -> std::string {
    try {
      load_side("baseline", inputs);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message({runs, runs}), "baseline side: " + a + " is read twice (from " + runs + " and from " + runs +
                                       "); each launch counts once: give each file or folder once");
  EXPECT_NE(message({a, runs}).find("is read twice (from " + a + " and from " + runs + ")"), std::string::npos);
  fs::create_symlink(dir_ / "runs", dir_ / "same");  // the same folder under another name
  EXPECT_NE(message({runs, (dir_ / "same").string()}).find("is read twice"), std::string::npos);
  EXPECT_EQ(load_side("baseline", {runs}).files.size(), 2u);
}

TEST_F(Load, WrongTypeInMetadataStillNamesFile) {
  auto j = nlohmann::json::parse(valid());
  j["run"]["exit_code"] = "zero";
  const auto msg = error_of(write("type.json", j.dump()));
  EXPECT_NE(msg.find("type.json"), std::string::npos) << msg;
}

TEST_F(Load, EmptyFolderAndMissingPath) {
  fs::create_directories(dir_ / "empty");
  EXPECT_NE(error_of(dir_ / "empty").find("holds no result files"), std::string::npos);
  EXPECT_NE(error_of(dir_ / "nope.json").find("no such file"), std::string::npos);
}

TEST_F(Load, FolderSkipsTheStreamBesideItsFile) {
  write("a.json", valid());
  write("a.jsonl", nlohmann::json::parse(valid())["results"][0].dump() + "\n");
  write("b.json", valid());
  write("notes.txt", "ignored");
  const Side s = load_side("baseline", {dir_.string()});
  ASSERT_EQ(s.files.size(), 2u);
}

TEST_F(Load, InterruptedRunUsesItsStream) {
  auto j = nlohmann::json::parse(valid());
  j["run"]["status"] = "interrupted";
  auto row = j["results"][0];
  j["results"] = nlohmann::json::array();
  write("run.json", j.dump());
  row["bytes"] = 1024;
  std::string stream = row.dump() + "\n";
  row["bytes"] = 2048;
  stream += row.dump() + "\n";
  stream += "{\"op\": \"allre";  // torn last line
  write("run.jsonl", stream);
  const Side s = load_side("baseline", {(dir_ / "run.json").string()});
  ASSERT_EQ(s.files.size(), 1u);
  EXPECT_EQ(s.files[0].results.size(), 2u);
  EXPECT_EQ(s.files[0].run.status, "interrupted");
}

// compare's fast path and the one parser of a result file (core/result.cpp) must read the same file
// or fail with the same message on every input. Mutations of a valid file: escaped keys (a key
// spelled "samples\u005fus" gave a row the next row's samples), numbers JSON does not allow (007,
// 1., inf), keys in strings and nested objects, duplicates, and random bytes.
std::string outcome(ResultFile (*load)(const fs::path&), const fs::path& p) {
  try {
    const ResultFile f = load(p);
    nlohmann::json j = to_json(f);
    return "ok " + j.dump();
  } catch (const std::exception& e) {
    return std::string("error ") + e.what();
  }
}

ResultFile plain(const fs::path& p) { return load_result_file(p); }

TEST_F(Load, FastPathAgreesWithTheParserOnMutatedFiles) {
  testing::RunModel m;
  m.ops = {"allreduce"};
  m.sizes = {1024, 4096, 16384};
  m.trials = 1;
  m.samples = 4;
  const std::string base = to_json(testing::make_result_file(m)).dump(1);
  std::vector<std::string> corpus = {base};
  auto replace_nth = [&](const std::string& what, const std::string& with, int nth) {
    std::string t = base;
    std::size_t at = 0;
    for (int k = 0; k <= nth; ++k) {
      at = t.find(what, k == 0 ? 0 : at + 1);
      if (at == std::string::npos) return;
    }
    t.replace(at, what.size(), with);
    corpus.push_back(t);
  };
  for (int n = 0; n < 3; ++n) {
    replace_nth("\"samples_us\"", "\"samples\\u005fus\"", n);
    replace_nth("\"samples_us\"", "\"samples_us\": [1, 2], \"samples_us\"", n);
    replace_nth("\"samples_us\"", "\"x\": {\"samples_us\": [5]}, \"samples_us\"", n);
    replace_nth("\"samples_us\"", "\"samples_uz\"", n);
    replace_nth("\"samples_us\": [", "\"samples_us\": [007, ", n);
    replace_nth("\"samples_us\": [", "\"samples_us\": [1., ", n);
    replace_nth("\"samples_us\": [", "\"samples_us\": [-0, ", n);
    replace_nth("\"samples_us\": [", "\"samples_us\": [1e999, ", n);
    replace_nth("\"samples_us\": [", "\"samples_us\": [1e-400, ", n);
    replace_nth("\"samples_us\": [", "\"samples_us\": [.5, ", n);
    replace_nth("\"samples_us\": [", "\"samples_us\": [+5, ", n);
    replace_nth("\"samples_us\": [", "\"samples_us\": [5 ,", n);
    replace_nth("\"samples_us\": [", "\"samples_us\": [\"5\", ", n);
    replace_nth("\"samples_us\": [", "\"samples_us\": [], \"y\": [", n);
    replace_nth("\"op\"", "\"label\": \"\\\"samples_us\\\": [9]\", \"op\"", n);
  }
  replace_nth("\"label\"", "\"label\": \"samples_us\", \"l2\"", 0);
  replace_nth("\"status\": \"complete\"", "\"status\": \"failed\"", 0);
  replace_nth("\"median\": ", "\"median\": 0, \"m2\": ", 0);
  // Random single-byte edits near the samples, where the fast path does its own parsing.
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  const std::string alphabet = "0123456789.-+eE,[]{}\":\\ nu_x";
  for (int k = 0; k < 1500; ++k) {
    std::string t = base;
    const auto anchor = t.find("\"samples_us\"", next() % t.size());
    const std::size_t at = anchor == std::string::npos ? next() % t.size() : anchor + next() % 40;
    if (at >= t.size()) continue;
    const int edit = static_cast<int>(next() % 3);
    const char ch = alphabet[next() % alphabet.size()];
    if (edit == 0) t[at] = ch;
    if (edit == 1) t.insert(t.begin() + static_cast<std::ptrdiff_t>(at), ch);
    if (edit == 2) t.erase(at, 1);
    corpus.push_back(t);
  }
  int agreed_ok = 0;
  for (std::size_t k = 0; k < corpus.size(); ++k) {
    const auto p = write("mutant.json", corpus[k]);
    const std::string a = outcome(&plain, p), b = outcome(&load_result_file_fast, p);
    ASSERT_EQ(a, b) << "input " << k << ":\n" << corpus[k];
    agreed_ok += a.starts_with("ok ") ? 1 : 0;
  }
  EXPECT_GT(agreed_ok, 10);                               // the corpus has files both read
  EXPECT_LT(agreed_ok, static_cast<int>(corpus.size()));  // and files both refuse
}

}  // namespace
}  // namespace ccbench::compare
