// The POSIX engine and the pieces around it on a temporary directory: write, sync, read back,
// commit by rename, O_DIRECT's fallback where the filesystem refuses it, eviction checked with
// mincore, errors with errno and offset; shard data. Step directories and --keep: step_dirs_test.cpp.
#include "checkpoint/storage.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "checkpoint/shard_data.hpp"
#include "checkpoint/step_dirs.hpp"
#include "checkpoint/target_facts.hpp"
#include "core/error.hpp"

namespace ccbench::checkpoint {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  explicit TempDir(const fs::path& base = fs::temp_directory_path()) {
    path = base / fs::path("ccbench-ckpt-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  static inline int counter = 0;
};

TEST(PosixStorage, WriteSyncReadRenameAndEvict) {
  TempDir dir;
  auto storage = open_storage(dir.path.string());
  const ShardData data(7, 0, 1, 1 << 20, 256 << 10);
  const std::string partial = (dir.path / partial_name(1, "x")).string();
  storage->make_dir(partial);
  const std::string file = partial + "/" + shard_name(1);
  auto f = storage->open(file, OpenFor::create_write, {});
  for (std::uint64_t off = 0; off < (1 << 20); off += 256 << 10)
    f->write_at(data.at(off, 256 << 10).data(), 256 << 10, off);
  f->sync();
  f->close();
  storage->sync_dir(partial);
  const std::string step = (dir.path / step_name(1)).string();
  storage->rename(partial, step);
  storage->sync_dir(dir.path.string());
  EXPECT_FALSE(fs::exists(partial));
  AlignedBuffer buf = AlignedBuffer::allocate(256 << 10);
  auto r = storage->open(step + "/" + shard_name(1), OpenFor::read, {});
  for (std::uint64_t off = 0; off < (1 << 20); off += 256 << 10) {
    r->read_at(buf.get(), 256 << 10, off);
    EXPECT_FALSE(data.first_mismatch(off, {buf.get(), 256 << 10}));
  }
  r->close();
  // Another writer's data (or trial) does not verify: the first differing byte is named.
  const ShardData other(7, 0, 2, 1 << 20, 256 << 10);
  EXPECT_TRUE(other.first_mismatch(0, {buf.get(), 256 << 10}).has_value());
  const Eviction e = storage->evict(step + "/" + shard_name(1));
  EXPECT_EQ(e.method, "fadvise");
  if (filesystem_type(dir.path.string()) == "tmpfs") {
    EXPECT_FALSE(e.evicted);  // tmpfs pages are the data
  }
  EXPECT_EQ(committed_steps(dir.path.string()).size(), 0U);  // no manifest: not ccbench's
}

TEST(PosixStorage, ErrorsCarryErrnoCallPathAndOffset) {
  TempDir dir;
  auto storage = open_storage(dir.path.string());
  try {
    storage->open((dir.path / "missing" / "f").string(), OpenFor::read, {});
    FAIL();
  } catch (const StorageError& e) {
    EXPECT_EQ(e.error(), ENOENT);
    EXPECT_EQ(e.errno_name(), "ENOENT");
    EXPECT_NE(std::string(e.what()).find("open " + (dir.path / "missing" / "f").string() + ": No such file"),
              std::string::npos)
        << e.what();
  }
  // /dev/full: every write is ENOSPC, at the offset it was given.
  auto full = storage->open("/dev/full", OpenFor::write_existing, {});
  char block[4096] = {};
  try {
    full->write_at(block, sizeof block, 8192);
    FAIL();
  } catch (const StorageError& e) {
    EXPECT_EQ(e.errno_name(), "ENOSPC");
    EXPECT_EQ(e.offset(), 8192U);
    EXPECT_STREQ(e.what(), "write /dev/full at offset 8192: No space left on device (ENOSPC)");
  }
  EXPECT_THROW(open_storage("gs://bucket/x"), UsageError);
}

TEST(PosixStorage, DirectFallsBackWhereRefused) {
  if (!fs::exists("/dev/shm") || filesystem_type("/dev/shm") != "tmpfs") GTEST_SKIP() << "no tmpfs at /dev/shm";
  TempDir dir("/dev/shm");
  auto storage = open_storage(dir.path.string());
  auto f = storage->open((dir.path / "d").string(), OpenFor::create_write, {.direct = true});
  // tmpfs refuses O_DIRECT before Linux 6.6 and takes it since.
  if (f->direct()) {
    EXPECT_EQ(f->direct_refused(), "");
  } else {
    EXPECT_EQ(f->direct_refused(), "the filesystem refused O_DIRECT (EINVAL): buffered I/O instead");
  }
  f->close();
}

TEST(TargetFacts, FilesAndMissingDirectoriesAreRefused) {
  TempDir dir;
  std::ofstream(dir.path / "file") << "x";
  EXPECT_EQ(check_target((dir.path / "file").string()).error, "is not a directory");
  EXPECT_EQ(check_target((dir.path / "nope").string()).error, "does not exist (create the directory first)");
  const TargetCheck ok = check_target(dir.path.string());
  EXPECT_EQ(ok.error, "");
  EXPECT_GT(ok.free_bytes, 0U);
  const auto facts = describe_target(dir.path.string());
  EXPECT_TRUE(facts["filesystem"].is_string());
  EXPECT_TRUE(facts["mount"].is_object());
}

}  // namespace
}  // namespace ccbench::checkpoint
