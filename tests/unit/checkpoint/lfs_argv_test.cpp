// Issue 27 item 6: `lfs` gets a target's path as one literal argument. A fake `lfs` first on PATH
// records its argv (NUL-separated); a path holding '$(touch PWNED)' must arrive as it is, and no
// shell may run it (no file PWNED in the working folder). Before the fix both calls went through
// popen("lfs ... '<path>'"), and the quote in the name ended the shell's quoting.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "checkpoint/s3/export_watch.hpp"
#include "checkpoint/target_facts.hpp"

namespace ccbench::checkpoint {
namespace {

namespace fs = std::filesystem;

class FakeLfs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ccbench-fake-lfs-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "bin");
    fs::create_directories(dir_ / "work");
    log_ = dir_ / "argv";
    {
      std::ofstream script(dir_ / "bin" / "lfs");
      script << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > '" << log_.string() << "'\n"
             << "echo \"$2: (0x00000009) exists archived, archive_id:1\"\n";
    }
    ::chmod((dir_ / "bin" / "lfs").c_str(), 0755);
    const char* path = std::getenv("PATH");
    old_path_ = path != nullptr ? path : "/usr/bin:/bin";
    ::setenv("PATH", ((dir_ / "bin").string() + ":" + old_path_).c_str(), 1);
    old_cwd_ = fs::current_path();
    fs::current_path(dir_ / "work");  // where `touch PWNED` would land
  }
  void TearDown() override {
    fs::current_path(old_cwd_);
    ::setenv("PATH", old_path_.c_str(), 1);
    fs::remove_all(dir_);
  }
  std::vector<std::string> logged_argv() const {
    std::ifstream in(log_, std::ios::binary);
    const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    std::string cur;
    for (char c : all) {
      if (c == '\0') {
        args.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    return args;
  }
  bool pwned() const { return fs::exists(dir_ / "work" / "PWNED") || fs::exists(dir_ / "PWNED"); }

  fs::path dir_, log_, old_cwd_;
  std::string old_path_;
};

TEST_F(FakeLfs, HsmStateGetsThePathAsOneArgument) {
  const std::string shard = (dir_ / "q'$(touch PWNED)'x" / "rank-00000.shard").string();
  const s3::HsmCheck check = s3::lfs_hsm_check();
  ASSERT_TRUE(check);
  EXPECT_EQ(check(shard), std::optional<bool>(true));  // the fake says archived
  EXPECT_EQ(logged_argv(), (std::vector<std::string>{"hsm_state", shard}));
  EXPECT_FALSE(pwned());
}

TEST_F(FakeLfs, GetstripeGetsTheTargetAsOneArgument) {
  const std::string target = (dir_ / "q'$(touch PWNED)'x").string();
  fs::create_directories(target);
  const nlohmann::json striping = lustre_striping(target);
  EXPECT_TRUE(striping.is_string()) << striping.dump();
  EXPECT_EQ(logged_argv(), (std::vector<std::string>{"getstripe", "-d", target}));
  EXPECT_FALSE(pwned());
}

TEST_F(FakeLfs, NoLfsOnPathMeansNoCheck) {
  ::setenv("PATH", (dir_ / "work").string().c_str(), 1);  // an empty folder
  EXPECT_EQ(lustre_striping(dir_.string()), nullptr);
  const s3::HsmCheck check = s3::lfs_hsm_check();
  EXPECT_EQ(check("/x"), std::nullopt);
}

}  // namespace
}  // namespace ccbench::checkpoint
