// Item 14: one symlink loop (or FIFO) in a folder of results is skipped, not fatal for the folder.
#include <sys/stat.h>

#include "compare/load.hpp"
#include "test_support.hpp"

namespace ccbench::harden_test {
namespace {

namespace fs = std::filesystem;

TEST(FolderInputs, ALoopOrAFifoIsSkipped) {
  const auto dir = fresh_dir("folder-loop");
  write(dir / "a.json", "{}");
  fs::create_symlink(dir / "loop2.json", dir / "loop1.json");
  fs::create_symlink(dir / "loop1.json", dir / "loop2.json");
  ASSERT_EQ(::mkfifo((dir / "pipe.json").c_str(), 0600), 0);
  EXPECT_EQ(compare::expand_input(dir), std::vector<fs::path>{dir / "a.json"});
}

}  // namespace
}  // namespace ccbench::harden_test
