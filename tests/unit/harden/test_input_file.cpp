// Item 5 (every loader refuses what is not a regular file) and item 1's filesystem cases.
#include <sys/stat.h>

#include "core/input_file.hpp"
#include "core/result.hpp"
#include "test_support.hpp"

namespace ccbench::harden_test {
namespace {

namespace fs = std::filesystem;

TEST(InputFile, ReadsARegularFile) {
  const auto dir = fresh_dir("input-regular");
  write(dir / "a.txt", "one\ntwo\n");
  EXPECT_EQ(read_input_file(dir / "a.txt"), "one\ntwo\n");
  EXPECT_EQ(not_regular_file_reason(dir / "a.txt"), "");
}

TEST(InputFile, RefusesAFifoWithoutBlocking) {
  const auto dir = fresh_dir("input-fifo");
  ASSERT_EQ(::mkfifo((dir / "claim.yaml").c_str(), 0600), 0);
  const auto p = dir / "claim.yaml";
  EXPECT_EQ(error_of([&] { read_input_file(p); }), p.string() + ": is a FIFO (named pipe), not a regular file");
  EXPECT_EQ(error_of([&] { LineReader r(p); }), p.string() + ": is a FIFO (named pipe), not a regular file");
  EXPECT_EQ(error_of([&] { load_result_file(dir / "claim.yaml"); }),
            p.string() + ": is a FIFO (named pipe), not a regular file");
}

TEST(InputFile, RefusesFoldersDevicesLoopsAndLongPaths) {
  const auto dir = fresh_dir("input-odd");
  EXPECT_EQ(error_of([&] { read_input_file(dir); }), dir.string() + ": is a folder, not a file");
  EXPECT_EQ(error_of([] { read_input_file("/dev/null"); }), "/dev/null: is a character device, not a regular file");
  fs::create_symlink(dir / "b", dir / "a");
  fs::create_symlink(dir / "a", dir / "b");
  EXPECT_EQ(error_of([&] { read_input_file(dir / "a"); }),
            (dir / "a").string() + ": symlink loop (too many levels of symbolic links)");
  const std::string long_path = "/tmp/" + std::string(5000, 'x');
  EXPECT_EQ(error_of([&] { read_input_file(long_path); }), long_path + ": path too long");
  EXPECT_EQ(error_of([&] { read_input_file(dir / "missing"); }), (dir / "missing").string() + ": no such file");
}

TEST(LineReader, LinesAcrossBlocksWithAndWithoutFinalNewline) {
  const auto dir = fresh_dir("lines");
  std::string text;
  for (int i = 0; i < 30000; ++i) text += "line " + std::to_string(i) + (i % 7 == 0 ? "\r\n" : "\n");
  text += "last without newline";
  write(dir / "big.txt", text);
  LineReader r(dir / "big.txt");
  std::string_view line;
  int n = 0;
  while (r.next(line)) {
    if (n < 30000) {
      ASSERT_EQ(line, "line " + std::to_string(n)) << "line " << n + 1;
    } else {
      EXPECT_EQ(line, "last without newline");
    }
    ++n;
    EXPECT_EQ(r.line_number(), static_cast<std::size_t>(n));
  }
  EXPECT_EQ(n, 30001);
  write(dir / "empty.txt", "");
  LineReader e(dir / "empty.txt");
  EXPECT_FALSE(e.next(line));
}

TEST(ResultFileNumbers, ExitCodeOutOfIntRangeIsRefusedNotCast) {
  // Found by the ASan/UBSan fuzz run (seed 4242): 1e300 reached nlohmann's get<int>().
  const auto dir = fresh_dir("exit-code");
  const auto p = write(dir / "r.json", R"({"schema_version": 1, "run": {"exit_code": 1e300}, "results": []})");
  EXPECT_EQ(error_of([&] { load_result_file(p); }), p.string() + ": /run/exit_code: must be an integer from -1 to 255");
  const auto q = write(dir / "q.json", R"({"schema_version": 1, "run": {"exit_code": 3}, "results": []})");
  EXPECT_EQ(load_result_file(q).run.exit_code, 3);
}

}  // namespace
}  // namespace ccbench::harden_test
