// Item 1 (run --config: no uncaught yaml-cpp or filesystem exception) and item 14 (claims: a key
// given twice, an unterminated quoted string at the end of the file).
#include <sys/stat.h>

#include "compare/claim.hpp"
#include "sweep/config_file.hpp"
#include "test_support.hpp"

namespace ccbench::harden_test {
namespace {

namespace fs = std::filesystem;

const std::set<std::string> kKnown = {"ops", "max-bytes", "min-bytes", "iters", "label"};

std::string config_error(const fs::path& p) {
  return error_of([&] { config_file_tokens(p.string(), kKnown); });
}

TEST(ConfigFile, ValuesAndLists) {
  const auto dir = fresh_dir("config-ok");
  const auto p = write(dir / "c.yaml", "ops: [allreduce, allgather]\nmax_bytes: 4K\nlabel: 'a, b'\n");
  EXPECT_EQ(config_file_tokens(p.string(), kKnown),
            (std::vector<std::string>{"--ops=allreduce,allgather", "--max-bytes=4K", "--label=a, b"}));
}

TEST(ConfigFile, MapsWhereValuesBelongAreExit2NamingKeyAndLine) {
  const auto dir = fresh_dir("config-bad");
  const auto p1 = write(dir / "a.yaml", "iters: 3\nops: [{a: 1}]\n");
  EXPECT_EQ(config_error(p1), p1.string() + ":2: 'ops': a list item must be a value, not a map");
  const auto p2 = write(dir / "b.yaml", "max_bytes:\n  x: 1\n");
  EXPECT_EQ(config_error(p2), p2.string() + ":2: 'max_bytes' must be a value or a list of values, not a map");
  const auto p3 = write(dir / "c.yaml", "[ops]: 1\n");
  EXPECT_EQ(config_error(p3), p3.string() + ":1: a key must be a plain option name, not a list");
  const auto p4 = write(dir / "d.yaml", "ops: [[allreduce]]\n");
  EXPECT_EQ(config_error(p4), p4.string() + ":1: 'ops': a list item must be a value, not a list");
  const auto p5 = write(dir / "e.yaml", "iters: 3\niters: 4\n");
  EXPECT_EQ(config_error(p5), p5.string() + ":2: key 'iters' given twice (first on line 1)");
  const auto p6 = write(dir / "f.yaml", "max_bytes: 1K\nmax-bytes: 2K\n");
  EXPECT_EQ(config_error(p6), p6.string() + ":2: key 'max-bytes' repeats line 1");
  const auto p7 = write(dir / "g.yaml", "iters: 3\nlabel: \"unterminated\n");
  EXPECT_EQ(config_error(p7), p7.string() + ":2: unterminated quoted string");
  const auto p8 = write(dir / "h.yaml", std::string(3000, '[') + "\n");
  EXPECT_EQ(config_error(p8).rfind(p8.string() + ":", 0), 0u) << config_error(p8);
}

TEST(ConfigFile, FilesystemTroubleIsExit2) {
  const auto dir = fresh_dir("config-fs");
  fs::create_symlink(dir / "b.yaml", dir / "a.yaml");
  fs::create_symlink(dir / "a.yaml", dir / "b.yaml");
  EXPECT_EQ(config_error(dir / "a.yaml"),
            "--config " + (dir / "a.yaml").string() + ": symlink loop (too many levels of symbolic links)");
  const std::string long_path = "/tmp/" + std::string(5000, 'y') + ".yaml";
  EXPECT_EQ(config_error(long_path), "--config " + long_path + ": path too long");
  EXPECT_EQ(config_error(dir), "--config " + dir.string() + ": is a folder, not a file");
}

std::string claim_error(const fs::path& p) {
  return error_of([&] { compare::load_claim_file(p); });
}

TEST(ClaimFile, DuplicateKeysAreRefused) {
  const auto dir = fresh_dir("claim-dup");
  const auto p = write(dir / "c.yaml", "expected_speedup: 18%\nmetric: busbw\nexpected_speedup: 50%\n");
  EXPECT_EQ(claim_error(p), p.string() + ":3: key 'expected_speedup' given twice (first on line 1)");
  const auto q = write(dir / "d.yaml", "expected_speedup: 18%\nbaseline: {provider: efa, provider: tcp}\n");
  EXPECT_EQ(claim_error(q), q.string() + ":2: key 'provider' given twice (first on line 2)");
}

TEST(ClaimFile, UnterminatedQuoteAtTheEndIsRefused) {
  const auto dir = fresh_dir("claim-quote");
  const auto p = write(dir / "c.yaml", "expected_speedup: 18%\nstatement: \"EFA v4 is faster\n");
  EXPECT_EQ(claim_error(p), p.string() + ":2: unterminated quoted string");
  const auto q = write(dir / "d.yaml", "expected_speedup: 18%\nstatement: 'it''s closed'\n");
  EXPECT_EQ(claim_error(q), "");
  EXPECT_EQ(compare::load_claim_file(q).statement, "it's closed");
}

TEST(ClaimFile, NonScalarKeyAndFifo) {
  const auto dir = fresh_dir("claim-odd");
  const auto p = write(dir / "c.yaml", "expected_speedup: 18%\n[a]: 1\n");
  EXPECT_EQ(claim_error(p), p.string() + ":2: a key: must be a single value");
  ASSERT_EQ(::mkfifo((dir / "fifo.yaml").c_str(), 0600), 0);
  EXPECT_EQ(claim_error(dir / "fifo.yaml"),
            (dir / "fifo.yaml").string() + ": is a FIFO (named pipe), not a regular file");
}

}  // namespace
}  // namespace ccbench::harden_test
