// Reading the files a user names (result files, claims, configs, other tools' logs).
//
// Every loader goes through here so that each one refuses what is not a regular file the same way:
// a FIFO would block the reader forever, a folder or a device is not data, and a symlink loop or a
// path longer than PATH_MAX must be a one-line error rather than an uncaught filesystem exception.
// Errors are ParseError "<path>: <reason>" (exit 2).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace ccbench {

// "" when `path` names a regular file (after following symlinks); otherwise why not, e.g.
// "no such file", "is a FIFO (named pipe), not a regular file", "symlink loop".
std::string not_regular_file_reason(const std::filesystem::path& path);

// Throws ParseError "<path>: <reason>" unless `path` is a regular file.
void require_regular_file(const std::filesystem::path& path);

// The whole content of a regular file. The check is made on the opened descriptor, so a file
// swapped for a FIFO between a check and the open cannot block.
std::string read_input_file(const std::filesystem::path& path);

// Lines of a regular file read in fixed-size blocks: memory stays bounded by the longest line,
// however large the file. A line excludes its '\n' (and a trailing '\r').
class LineReader {
 public:
  explicit LineReader(const std::filesystem::path& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line, valid until the next call; false at the end of the file.
  bool next(std::string_view& line);
  // 1-based number of the line last returned.
  std::size_t line_number() const { return line_number_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  bool fill();

  std::filesystem::path path_;
  int fd_ = -1;
  std::string buffer_;
  std::size_t begin_ = 0;  // start of unread data in buffer_
  bool eof_ = false;
  std::size_t line_number_ = 0;
};

}  // namespace ccbench
