// Step directories (issue 27): which folders are ccbench's steps (a manifest ccbench wrote, every
// field checked), what --keep and the end of a run remove (only the files a manifest lists), the
// six-digit numbering, and manifests that are FIFOs or hold numbers out of range.
#include "checkpoint/step_dirs.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.hpp"

namespace ccbench::checkpoint {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           fs::path("ccbench-steps-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  static inline int counter = 0;
};

std::string manifest_text(int step, const std::string& extra = "") {
  return R"({"tool": "ccbench checkpoint", "version": 1, "run": "4242", "step": )" + std::to_string(step) +
         R"(, "trial": 0, "seed": 1, "shard_bytes": 4096, "shards": [{"writer": 0}], "files": ["rank-00000.shard"])" +
         extra + "}";
}

// A committed step as ccbench writes it: manifest and the one shard it lists.
void make_step(const fs::path& target, int step, const std::string& manifest) {
  fs::create_directories(target / step_name(step));
  std::ofstream(target / step_name(step) / kManifestName) << manifest;
  std::ofstream(target / step_name(step) / shard_name(0)) << "shard";
}

TEST(StepDirs, OnlyManifestsCcbenchWroteAreSteps) {
  TempDir dir;
  for (int s : {1, 2, 3, 10}) make_step(dir.path, s, manifest_text(s));
  make_step(dir.path, 5, "{}");                                       // a user's folder: not ours
  make_step(dir.path, 6, R"({"tool": "torch.save", "version": 1})");  // another tool's
  fs::create_directories(dir.path / "step-000004");                   // no manifest at all
  fs::create_directories(dir.path / partial_name(11, "r"));
  EXPECT_EQ(last_step(dir.path.string()), 11);
  const auto committed = committed_steps(dir.path.string());
  ASSERT_EQ(committed.size(), 4U);
  EXPECT_EQ(committed.back().step, 10);
  EXPECT_EQ(committed.back().manifest.files, std::vector<std::string>{"rank-00000.shard"});
  const auto gone = steps_to_remove(committed, 2);
  ASSERT_EQ(gone.size(), 2U);
  EXPECT_EQ(gone[0].step, 1);
  EXPECT_EQ(gone[1].step, 2);
  EXPECT_TRUE(steps_to_remove(committed, 0).empty());
}

TEST(StepDirs, RemoveTakesOnlyTheListedFiles) {
  TempDir dir;
  make_step(dir.path, 1, manifest_text(1));
  make_step(dir.path, 2, manifest_text(2));
  std::ofstream(dir.path / step_name(2) / "model.pt") << "user data";
  const auto committed = committed_steps(dir.path.string());
  ASSERT_EQ(committed.size(), 2U);
  EXPECT_EQ(remove_step(committed[0]), "");
  EXPECT_FALSE(fs::exists(dir.path / step_name(1)));
  const std::string left = remove_step(committed[1]);
  EXPECT_NE(left.find("it holds files its manifest does not list"), std::string::npos) << left;
  EXPECT_TRUE(fs::exists(dir.path / step_name(2) / "model.pt"));
  EXPECT_FALSE(fs::exists(dir.path / step_name(2) / kManifestName));  // no longer looks committed
  EXPECT_FALSE(fs::exists(dir.path / step_name(2) / shard_name(0)));
}

TEST(StepDirs, StepNamesHaveSixDigits) {
  EXPECT_EQ(step_of("step-000007"), 7);
  EXPECT_EQ(step_of(".step-000007.partial-99"), 7);
  EXPECT_EQ(step_of("step-999999999"), -1);  // a user's folder, never a step of ours
  EXPECT_EQ(step_of("step-7"), -1);
  EXPECT_EQ(step_of(".step-0000070.partial-1"), -1);
  EXPECT_EQ(step_of(".step-000007.x"), -1);
  EXPECT_EQ(last_step(std::vector<std::string>{"step-999999999", "step-000003"}), 3);
  EXPECT_EQ(steps_left(last_step(std::vector<std::string>{"step-999999"})), 0);
  EXPECT_EQ(step_name(kMaxStep), "step-999999");
}

TEST(StepDirs, ManifestNumbersOutOfRangeNameTheField) {
  for (const auto& [field, value] : std::vector<std::pair<std::string, std::string>>{{"trial", "1e300"},
                                                                                     {"trial", "-7"},
                                                                                     {"trial", "0.5"},
                                                                                     {"seed", "4294967296"},
                                                                                     {"shard_bytes", "0"},
                                                                                     {"step", "\"1\""},
                                                                                     {"version", "2"}}) {
    nlohmann::json m = nlohmann::json::parse(manifest_text(1));
    m[field] = nlohmann::json::parse(value);
    try {
      parse_manifest(m.dump(), "/t/step-000001/ccbench-manifest.json");
      ADD_FAILURE() << field << " " << value << " accepted";
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find("/t/step-000001/ccbench-manifest.json: field '" + field + "'"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_FALSE(parse_manifest("[1]", "m").has_value());
  EXPECT_FALSE(parse_manifest(R"({"tool": 7})", "m").has_value());
  EXPECT_THROW(parse_manifest("{", "m"), ParseError);
  for (const char* bad : {R"(["../x"])", R"(["a/b"])", R"([".."])", R"(["ccbench-manifest.json"])", "[]", "[1]"}) {
    nlohmann::json m = nlohmann::json::parse(manifest_text(1));
    m["files"] = nlohmann::json::parse(bad);
    EXPECT_THROW(parse_manifest(m.dump(), "m"), ParseError) << bad;
  }
}

TEST(StepDirs, FifoManifestIsAProblemNotABlock) {
  TempDir dir;
  fs::create_directories(dir.path / step_name(1));
  ASSERT_EQ(::mkfifo((dir.path / step_name(1) / kManifestName).c_str(), 0600), 0);
  const auto entries = scan_steps(dir.path.string());
  ASSERT_EQ(entries.size(), 1U);
  EXPECT_FALSE(entries[0].manifest.has_value());
  EXPECT_NE(entries[0].problem.find(kManifestName), std::string::npos) << entries[0].problem;
  EXPECT_TRUE(committed_steps(dir.path.string()).empty());
}

TEST(StepDirs, AHugeFileAsTheManifestIsNotRead) {
  TempDir dir;
  make_step(dir.path, 1, manifest_text(1));
  fs::resize_file(dir.path / step_name(1) / kManifestName, 65ULL << 20);  // sparse: no disk used
  const auto entries = scan_steps(dir.path.string());
  ASSERT_EQ(entries.size(), 1U);
  EXPECT_NE(entries[0].problem.find("68157440 bytes, too large for a manifest"), std::string::npos)
      << entries[0].problem;
}

TEST(StepDirs, AStepNumberThatIsNotTheFoldersIsAProblem) {
  TempDir dir;
  make_step(dir.path, 3, manifest_text(1));  // a copy of step 1 under another name: not removed
  const auto entries = scan_steps(dir.path.string());
  ASSERT_EQ(entries.size(), 1U);
  EXPECT_NE(entries[0].problem.find("field 'step': 1, but the folder is step-000003"), std::string::npos)
      << entries[0].problem;
  EXPECT_TRUE(committed_steps(dir.path.string()).empty());
}

}  // namespace
}  // namespace ccbench::checkpoint
