// Item 6: --out / -J keep symlinks and device nodes; regular files are still replaced atomically.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/result.hpp"
#include "test_support.hpp"

namespace ccbench::harden_test {
namespace {

namespace fs = std::filesystem;

TEST(AtomicWrite, ReplacesARegularFile) {
  const auto dir = fresh_dir("atomic-regular");
  write(dir / "out.json", "old");
  write_file_atomically(dir / "out.json", "new\n");
  EXPECT_EQ(read(dir / "out.json"), "new\n");
}

TEST(AtomicWrite, WritesThroughASymlinkAndKeepsIt) {
  const auto dir = fresh_dir("atomic-link");
  fs::create_directories(dir / "real");
  write(dir / "real/target.json", "old");
  fs::create_symlink("real/target.json", dir / "link.json");  // relative target
  write_file_atomically(dir / "link.json", "new\n");
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(fs::read_symlink(dir / "link.json"), fs::path("real/target.json"));
  EXPECT_EQ(read(dir / "real/target.json"), "new\n");
}

TEST(AtomicWrite, ADanglingSymlinkCreatesItsTarget) {
  const auto dir = fresh_dir("atomic-dangling");
  fs::create_symlink(dir / "made.json", dir / "link.json");
  write_file_atomically(dir / "link.json", "x\n");
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(read(dir / "made.json"), "x\n");
}

TEST(AtomicWrite, DeviceNodesAndFifosAreWrittenDirectly) {
  write_file_atomically("/dev/null", "discarded\n");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null was replaced";

  const auto dir = fresh_dir("atomic-fifo");
  const auto fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No reader: an error naming the file, never a block and never a replaced FIFO.
  try {
    write_file_atomically(fifo, "x");
    ADD_FAILURE() << "no error";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find(fifo.string() + ": a FIFO with no reader"), std::string::npos) << e.what();
  }
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  // With a reader: the bytes arrive through the pipe.
  const int rfd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(rfd, 0);
  write_file_atomically(fifo, "through\n");
  char buf[32] = {};
  EXPECT_EQ(::read(rfd, buf, sizeof buf), 8);
  EXPECT_STREQ(buf, "through\n");
  ::close(rfd);
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(AtomicWrite, AFolderOrALinkLoopIsAnError) {
  const auto dir = fresh_dir("atomic-folder");
  fs::create_directories(dir / "r.json");
  EXPECT_THROW(write_file_atomically(dir / "r.json", "x"), std::system_error);
  EXPECT_TRUE(fs::is_directory(dir / "r.json"));
  fs::create_symlink(dir / "b", dir / "a");
  fs::create_symlink(dir / "a", dir / "b");
  EXPECT_THROW(write_file_atomically(dir / "a", "x"), std::system_error);
  EXPECT_TRUE(fs::is_symlink(dir / "a"));
}

}  // namespace
}  // namespace ccbench::harden_test
