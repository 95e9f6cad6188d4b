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

}  // namespace
}  // namespace ccbench::compare
